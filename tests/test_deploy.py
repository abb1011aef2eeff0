"""deploy/: the commands the container files run exist, and production fails fast."""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from arena.cli import build_parser
from arena.config import ConfigError, from_env

DEPLOY = Path(__file__).resolve().parent.parent / "deploy"
FILES = [DEPLOY / "Dockerfile", DEPLOY / "compose.yaml", DEPLOY / "k8s" / "arena.yaml"]


def _arena_commands() -> set[str]:
    text = "\n".join(p.read_text() for p in FILES)
    return set(re.findall(r'\["arena", "([a-z]+)"', text))


def test_every_arena_command_in_deploy_exists():
    subcommands = build_parser()._subparsers._group_actions[0].choices  # type: ignore[union-attr]
    used = _arena_commands()
    assert used >= {"worker", "beat", "db"}
    assert used <= set(subcommands)


def test_every_sample_bot_in_deploy_exists():
    text = "\n".join(p.read_text() for p in FILES)
    for module in set(re.findall(r"sample_bots\.[a-z_]+", text)):
        assert importlib.util.find_spec(module) is not None, module


def test_the_wsgi_entry_point_names_a_module_that_exists():
    assert "arena.wsgi:app" in (DEPLOY / "Dockerfile").read_text()
    assert importlib.util.find_spec("arena.wsgi") is not None


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({}, "ARENA_SECRET_KEY"),
        ({"ARENA_SECRET_KEY": "k"}, "ARENA_DATABASE_URL"),
        ({"ARENA_SECRET_KEY": "k", "ARENA_DATABASE_URL": "postgresql://db/arena"},
         "ARENA_BROKER_URL"),
        ({"ARENA_SECRET_KEY": "k", "ARENA_DATABASE_URL": "postgresql://db/arena",
          "ARENA_BROKER_URL": "redis://redis:6379/0"}, "ARENA_ORGANISER_TOKEN must be set"),
        ({"ARENA_SECRET_KEY": "k", "ARENA_DATABASE_URL": "postgresql://db/arena",
          "ARENA_BROKER_URL": "redis://redis:6379/0", "ARENA_ORGANISER_TOKEN": "  "},
         "ARENA_ORGANISER_TOKEN must be set"),
    ],
)  # fmt: skip
def test_the_production_profile_fails_fast_without_its_settings(env, message, tmp_path):
    with pytest.raises(ConfigError, match=message):
        from_env({"ARENA_PROFILE": "production", "ARENA_DATA_DIR": str(tmp_path), **env})


@pytest.mark.parametrize(
    ("name", "value", "message"),
    [
        ("ARENA_WORKER_CONCURRENCY", "many", "a number"),
        ("ARENA_WORKER_CONCURRENCY", "0", "at least 1"),
        ("ARENA_LEASE_SECONDS", "nan", "a finite number"),
        ("ARENA_MATCH_TIME_LIMIT", "inf", "a finite number"),
        ("ARENA_CONNECTIONS_PER_BOT", "-3", "at least 1"),
        ("ARENA_DEADLINE_MS", "2s", "a number"),
    ],
)
def test_a_bad_number_in_the_environment_is_named_at_start_up(name, value, message, tmp_path):
    with pytest.raises(ConfigError, match=f"{name} must be {message}"):
        from_env({"ARENA_DATA_DIR": str(tmp_path), name: value})


PRODUCTION = {
    "ARENA_PROFILE": "production",
    "ARENA_SECRET_KEY": "k",
    "ARENA_SECRETS_KEY": "mQ0J3Yl0y8nW7e4YlKJ7r8m3n7d6qv2o4Qpq0m4a1pY=",  # a Fernet key
    # nothing listens there: the command must stop before it connects
    "ARENA_DATABASE_URL": "postgresql+psycopg://arena@127.0.0.1:1/arena",
    "ARENA_BROKER_URL": "redis://127.0.0.1:1/0",
}


def test_the_production_profile_starts_with_an_organiser_token(tmp_path):
    config = from_env({**PRODUCTION, "ARENA_DATA_DIR": str(tmp_path), "ARENA_ORGANISER_TOKEN": "t"})
    assert config.profile == "production" and config.organiser_token == "t"
    assert config.open_play is False  # people's matches are the organiser's, unless opened


@pytest.mark.parametrize(("value", "open_play"), [("", True), ("0", False), ("yes", True)])
def test_open_play_is_a_switch(tmp_path, value: str, open_play: bool) -> None:
    env = {"ARENA_DATA_DIR": str(tmp_path), "ARENA_OPEN_PLAY": value}
    assert from_env(env).open_play is open_play
    with pytest.raises(ConfigError, match="ARENA_OPEN_PLAY must be 1 or 0"):
        from_env({**env, "ARENA_OPEN_PLAY": "maybe"})


def test_the_cli_refuses_production_without_an_organiser_token_in_one_line(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith("ARENA_")}
    env.update(PRODUCTION, ARENA_DATA_DIR=str(tmp_path))
    done = subprocess.run(
        [sys.executable, "-m", "arena", "db", "upgrade"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith("arena: ARENA_ORGANISER_TOKEN must be set"), done.stderr
    assert "Traceback" not in done.stderr and len(done.stderr.splitlines()) == 1


def test_every_production_deploy_file_sets_the_organiser_token():
    compose = (DEPLOY / "compose.yaml").read_text()
    assert "ARENA_ORGANISER_TOKEN: ${ARENA_ORGANISER_TOKEN:?" in compose  # compose refuses
    assert re.search(
        r"^  ARENA_ORGANISER_TOKEN: \S", (DEPLOY / "k8s" / "arena.yaml").read_text(), re.M
    )


def test_beat_starts_where_its_data_dir_does_not_exist_yet(tmp_path):
    """The image's ARENA_DATA_DIR (/tmp/arena) does not exist in a new container: beat, the
    one process that keeps a file there with PostgreSQL, makes it (else it died at start,
    and no ladder round or housekeeping ever ran)."""
    import shutil
    import time

    from tests.support.lanes import _missing, _redis_server, postgres_url

    if shutil.which("redis-server") is None:
        _missing("the redis-server program")
    data_dir = tmp_path / "not-yet"
    env = {k: v for k, v in os.environ.items() if not k.startswith("ARENA_")}
    with postgres_url() as url, _redis_server(tmp_path) as (broker_url, _restart):
        env.update(ARENA_DATA_DIR=str(data_dir), ARENA_DATABASE_URL=url,
                   ARENA_BROKER_URL=broker_url)  # fmt: skip
        beat = subprocess.Popen(
            [sys.executable, "-m", "arena", "beat"], env=env, stderr=subprocess.PIPE, text=True
        )
        try:
            deadline = time.monotonic() + 60
            while beat.poll() is None and time.monotonic() < deadline:
                if any(data_dir.glob("celerybeat-schedule*")):
                    break
                time.sleep(0.2)
            assert beat.poll() is None, beat.communicate()[1]
            assert any(data_dir.glob("celerybeat-schedule*"))
        finally:
            beat.terminate()
            beat.communicate(timeout=30)


def _manifests() -> list[dict]:
    import yaml

    return [d for d in yaml.safe_load_all((DEPLOY / "k8s" / "arena.yaml").read_text()) if d]


def _compose() -> dict:
    import yaml

    return yaml.safe_load((DEPLOY / "compose.yaml").read_text())


def test_every_pod_starts_on_the_newest_schema():
    """Each Deployment's pods migrate first (an initContainer, with the lock that lets pods
    started together take turns), with the same image and settings as the process."""
    deployments = [d for d in _manifests() if d["kind"] == "Deployment"]
    assert {d["metadata"]["name"] for d in deployments} == {
        "arena-web", "arena-worker", "arena-beat"
    }  # fmt: skip
    for deployment in deployments:
        pod = deployment["spec"]["template"]["spec"]
        (main,) = pod["containers"]
        (init,) = pod["initContainers"]
        assert init["command"][:3] == ["arena", "db", "upgrade"], deployment["metadata"]
        assert "--wait" in init["command"]  # the database may start at the same time
        assert (init["image"], init["envFrom"]) == (main["image"], main["envFrom"])


def test_the_web_probes_ask_paths_the_app_serves(app):
    (web,) = [d for d in _manifests() if d["metadata"]["name"] == "arena-web" and
              d["kind"] == "Deployment"]  # fmt: skip
    (container,) = web["spec"]["template"]["spec"]["containers"]
    port = container["ports"][0]["containerPort"]
    ready, alive = container["readinessProbe"]["httpGet"], container["livenessProbe"]["httpGet"]
    assert (ready["path"], ready["port"]) == ("/readyz", port)
    assert (alive["path"], alive["port"]) == ("/healthz", port)
    rules = {rule.rule for rule in app.url_map.iter_rules()}
    assert {"/readyz", "/healthz"} <= rules


def test_the_ingress_holds_a_long_poll_and_names_the_client():
    """A bot's long poll is held up to POLL_SECONDS: the ingress must not cut it first
    (the request it is being handed would be lost); and behind it the web counts the
    address the ingress names, not the ingress's own (ARENA_TRUSTED_PROXIES)."""
    from arena import proxies
    from arena.api.connect import POLL_SECONDS

    docs = _manifests()
    (ingress,) = [d for d in docs if d["kind"] == "Ingress"]
    notes = ingress["metadata"]["annotations"]
    for name in ("proxy-read-timeout", "proxy-send-timeout"):
        assert int(notes[f"nginx.ingress.kubernetes.io/{name}"]) > POLL_SECONDS
    backend = ingress["spec"]["rules"][0]["http"]["paths"][0]["backend"]["service"]
    (service,) = [
        d for d in docs if d["kind"] == "Service" and d["metadata"]["name"] == "arena-web"
    ]
    assert backend["name"] == service["metadata"]["name"]
    assert backend["port"]["number"] == service["spec"]["ports"][0]["port"]
    (config,) = [d for d in docs if d["kind"] == "ConfigMap"]
    assert proxies.parse(config["data"]["ARENA_TRUSTED_PROXIES"]) == 1


def test_the_compose_stack_starts_after_its_migration():
    services = _compose()["services"]
    arena = {name: s for name, s in services.items() if s.get("image") == "card-bot-arena"}
    assert {"migrate", "web", "worker", "beat"} <= set(arena)
    assert services["migrate"]["command"][:3] == ["arena", "db", "upgrade"]
    assert "--wait" in services["migrate"]["command"]  # where health checks are not run
    for name, service in arena.items():
        if name != "migrate":
            condition = service["depends_on"]["migrate"]["condition"]
            assert condition == "service_completed_successfully", name
    assert services["worker"]["deploy"] == {"mode": "replicated", "replicas": 2}
    # the rate limits count across web processes: in Redis
    assert services["web"]["environment"]["ARENA_RATELIMIT_STORAGE"].startswith("redis://")


def _forward_later(port: int, to: tuple[str, int], after: float) -> None:
    """From ``after`` seconds on, connections to ``port`` reach ``to`` (a database that
    starts later), in a daemon thread."""
    import contextlib
    import socket
    import threading

    def pipe(a: socket.socket, b: socket.socket) -> None:
        with a, b, contextlib.suppress(OSError):  # the other side closed first
            while data := a.recv(65536):
                b.sendall(data)

    def serve() -> None:
        threading.Event().wait(after)
        listener = socket.create_server(("127.0.0.1", port))
        while True:
            client, _ = listener.accept()
            upstream = socket.create_connection(to)
            for a, b in ((client, upstream), (upstream, client)):
                threading.Thread(target=pipe, args=(a, b), daemon=True).start()

    threading.Thread(target=serve, daemon=True).start()


def test_db_upgrade_waits_for_a_database_that_starts_later(tmp_path):
    """The compose stack's migration starts beside PostgreSQL, where no health check is
    run: ``--wait`` retries until it answers, and fails in one line if it never does."""
    from sqlalchemy.engine import make_url

    from tests.support.lanes import free_port, postgres_url

    env = {k: v for k, v in os.environ.items() if not k.startswith("ARENA_")}
    env["ARENA_DATA_DIR"] = str(tmp_path)
    command = [sys.executable, "-m", "arena", "db", "upgrade", "--wait"]
    with postgres_url() as url:
        real = make_url(url)
        port = free_port()
        env["ARENA_DATABASE_URL"] = real.set(port=port).render_as_string(hide_password=False)
        never = subprocess.run([*command, "1"], env=env, capture_output=True, text=True, timeout=60)
        assert never.returncode == 2 and never.stderr.count("\n") == 1, never.stderr
        assert never.stderr.startswith("arena: the database cannot be used: connection")
        _forward_later(port, (real.host, real.port), after=2)
        later = subprocess.run(
            [*command, "60"], env=env, capture_output=True, text=True, timeout=120
        )
        assert later.returncode == 0, later.stderr
        assert "the database schema is up to date" in later.stdout


def test_prometheus_reaches_each_workers_metrics_with_the_token():
    """A worker's metrics port listens on loopback unless told (ARENA_WORKER_METRICS_HOST):
    the files that run workers beside a Prometheus tell it the pod's or container's
    address, on the port the command serves and the scrape config names, and the web's
    /metrics, refused in production without ARENA_METRICS_TOKEN, gets it."""
    import yaml

    parser = build_parser()
    (worker,) = [d for d in _manifests() if d["metadata"]["name"] == "arena-worker"]
    (container,) = worker["spec"]["template"]["spec"]["containers"]
    args = parser.parse_args(container["command"][1:])
    assert args.metrics_port and args.pool != "prefork"
    assert {"name": "metrics", "containerPort": args.metrics_port} in container["ports"]
    env = {e["name"]: e for e in container["env"]}
    host = env["ARENA_WORKER_METRICS_HOST"]["valueFrom"]["fieldRef"]["fieldPath"]
    assert host == "status.podIP"  # the pod's IP only, as the web's relay listener
    (secret,) = [d for d in _manifests() if d["kind"] == "Secret"]
    assert secret["stringData"]["ARENA_METRICS_TOKEN"]
    assert {"secretRef": {"name": "arena"}} in container["envFrom"]

    services = _compose()["services"]
    args = parser.parse_args(services["worker"]["command"][1:])
    assert args.metrics_port and args.pool != "prefork"
    assert services["worker"]["environment"]["ARENA_WORKER_METRICS_HOST"] == "0.0.0.0"
    for name in ("web", "worker"):
        assert services[name]["environment"]["ARENA_METRICS_TOKEN"].startswith("${ARENA_METRICS")
    scrape = yaml.safe_load((DEPLOY / "prometheus.yml").read_text())["scrape_configs"]
    jobs = {job["job_name"]: job for job in scrape}
    assert jobs["arena-worker"]["static_configs"][0]["targets"] == [f"worker:{args.metrics_port}"]
    for name in ("arena-web", "arena-worker"):
        assert jobs[name]["authorization"]["type"] == "Bearer"
