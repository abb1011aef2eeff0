"""Tournaments as competitions: their formats (schedules and the stop rule), ratings
and standings.  Pure computation and the rows it keeps, no process of its own."""
