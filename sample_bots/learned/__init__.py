"""A bot trained with numpy only: a linear softmax policy over a game's fixed action space
(the encodings of ``arena/games/<game>/encoding.py``), trained by REINFORCE against the
house random players in ``arena.learn.single_agent_env``, played as an SDK bot.

- ``policy``: the policy (numpy), its ``.npz`` file;
- ``train``: ``python -m sample_bots.learned.train --game president --minutes 3 ...``;
- ``evaluate``: win rate and mean rank reward with confidence intervals, against the
  random policy in the same seats and seeds;
- ``bot``: ``LearnedBot``, served like the other sample bots.

See README.md in this folder for the commands and the measured results.
"""
