"""The connect transport: bots that connect out to the arena.

A bot with no public address opens a session with a web process and takes its requests
with long polls (``arena.api.connect``).  The process holding a bot's session is its
*home* (``sessions``, in the database); a worker hands the home each request it would
have sent to a webhook bot, over an internal HTTP listener of the home (``internal``),
and the home's ``hub`` passes it to the bot's next poll and the bot's answer back.  A
poll that reaches another web process (a bot's polls each take a connection of their
own, which a load balancer or gunicorn's processes send anywhere) is passed on to the
home (``forward``); only when the home is gone (its process died) does the process the
bot polls take the session over, and the requests held by the old home are sent again
to the new one.  ``client`` is the workers' side: the referee's client of such a
bot, handing each request to the bot's home.
"""
