"""Screenshots of the replay viewer, one per game at a mid-match step, for the README.

    python docs/make_screenshots.py [--chromium /usr/bin/chromium] [--out docs/img]

Plays one match of each game between the house bots (fixed seeds: the same pictures each
time), writes each as the self-contained page ``arena view --html`` makes, and takes the
viewer's picture in Chromium (driven by Playwright) from one seat's perspective: that
seat's cards face up, the others' face down.
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from arena.games import make_policy
from arena.match.referee import PolicyClient, Referee, policy_rng
from arena.web.replay_file import render

SHOTS = [  # game, players, seed, seat shown, step (a fraction of the match)
    ("cactus", 3, 12, 0, 0.35),
    ("cactus-game", 4, 5, 1, 0.5),
    ("president", 4, 7, 2, 0.3),
]
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--chromium", default="/usr/bin/chromium")
    parser.add_argument("--out", default=str(Path(__file__).parent / "img"))
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as folder, sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=args.chromium, args=FLAGS)
        page = browser.new_page(viewport={"width": 1100, "height": 900})
        for game, players, seed, seat, at in SHOTS:
            bots = ["heuristic"] + ["random"] * (players - 1)
            clients = [
                PolicyClient(make_policy(game, bot, policy_rng(seed, s)), f"{bot}-{s}")
                for s, bot in enumerate(bots)
            ]
            record = Referee().run(game, clients, seed, match_id=f"{game}-{seed}").to_json()
            html = Path(folder) / f"{game}.html"
            html.write_text(render(record), encoding="utf-8")
            step = int(len(record["steps"]) * at)
            page.goto(f"{html.as_uri()}#seat={seat}&step={step}")
            page.wait_for_function(
                "s => document.getElementById('replay').dataset.step === String(s)", arg=step
            )
            target = out / f"viewer-{game}.png"
            page.locator("#replay").screenshot(path=str(target))
            print(f"{target}: {game}, seat {seat}'s view at step {step} of {len(record['steps'])}")
        browser.close()


if __name__ == "__main__":
    main()
