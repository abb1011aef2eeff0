"""The connect transport: bots that connect out to the arena.

A bot with no public address opens a session with a web process and takes its requests
with long polls (``arena.api.connect``).  The process holding a bot's session is its
*home* (``sessions``, in the database); a worker hands the home each request it would
have sent to a webhook bot, over an internal HTTP listener of the home (``internal``),
and the home's ``hub`` passes it to the bot's next poll and the bot's answer back.  A
session moves to whichever web process the bot polls (a load balancer, a process that
died): that process takes it over, and the requests held by the old home are sent
again to the new one.  ``client`` is the workers' side: the referee's client of such a
bot, handing each request to the bot's home.
"""
