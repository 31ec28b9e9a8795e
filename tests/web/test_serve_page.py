"""`companion serve --page` and `sim --page`: the page in the appliance's own loop, the
[page] config table, and the PIN in the output."""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from companion.cli import main
from companion.config import ConfigError, parse_config

ROOT = Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def request(url, body=None, headers=None, cookie=None):
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(url, data=data, method="POST" if data else "GET")
    req.add_header("Content-Type", "application/json")
    for k, v in (headers or {}).items():
        req.add_header(k, v)
    if cookie:
        req.add_header("Cookie", cookie)
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            return r.status, json.loads(r.read()), r.headers
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read()), e.headers


def test_page_config_table_is_validated_with_one_line_naming_the_key():
    page = parse_config('[page]\nenabled = true\nhost = "192.168.1.20"\nport = 8081').page
    assert (page.enabled, page.host, page.port, page.pin) == (True, "192.168.1.20", 8081, None)
    assert parse_config("").page.enabled is False
    assert parse_config('[page]\npin = ""').page.pin is None
    for text, key in [
        ("[page]\nenabled = true", "page.host is missing"),
        ("[page]\nenabled = 1", "page.enabled"),
        ("[page]\nport = 70000", "page.port"),
        ("[page]\npin = 1234", "page.pin"),
        ('[page]\npin = "12"', "page.pin"),
        ('[page]\nhost = "no such host!"', "page.host"),
        ("[page]\ncolour = 1", "unknown key page.colour"),
    ]:
        with pytest.raises(ConfigError) as info:
            parse_config(text)
        assert key in str(info.value) and "\n" not in str(info.value)


def test_serve_and_sim_refuse_a_bad_page_address_or_pin(capsys):
    assert main(["serve", "--page", "nowhere"]) == 78
    assert "--page must be HOST:PORT" in capsys.readouterr().err
    assert main(["serve", "--page", "127.0.0.1:8080", "--pin", "12ab"]) == 78
    assert "--pin" in capsys.readouterr().err
    assert main(["sim", "--page", "127.0.0.1:99999"]) == 2
    assert "--page must be HOST:PORT" in capsys.readouterr().err


def serve(tmp_path, *args):
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    env.pop("NOTIFY_SOCKET", None)
    return subprocess.Popen(
        [sys.executable, "-m", "companion", "serve", "--log-dir", str(tmp_path / "logs"),
         *args],
        cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )


def read_until(proc, pattern, timeout=30):
    end = time.monotonic() + timeout
    lines = []
    while time.monotonic() < end:
        line = proc.stderr.readline()
        if not line:
            break
        lines.append(line)
        m = re.search(pattern, line)
        if m:
            return m, lines
    raise AssertionError(f"{pattern!r} not printed; got {lines}")


def test_serve_serves_the_page_prints_the_pin_and_takes_events(tmp_path):
    port = free_port()
    proc = serve(tmp_path, "--page", f"127.0.0.1:{port}")
    try:
        m, _ = read_until(proc, r"table page (http://\S+) PIN (\d{4})")
        url, pin = m.group(1), m.group(2)
        read_until(proc, "ready")
        status, state, _ = request(url + "api/state")
        assert status == 200 and state["phase"] == "no_game" and state["paired"] is False
        assert "new_game" in state["moves"]
        h = {"X-Vault-Companion": "1"}
        status, body, headers = request(url + "api/pair", {"pin": pin}, h)
        assert status == 200
        cookie = headers["Set-Cookie"].split(";")[0]
        status, body, _ = request(url + "api/events", {"command": "new 2 Ann Bob"}, h, cookie)
        assert status == 200 and body["accepted"] and body["state"]["phase"] == "heist_hide"
        status, body, _ = request(url + "api/events", {"type": "stage", "stage": 9}, h, cookie)
        assert status == 409 and body["rejected"].startswith("stage:")
    finally:
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err
    logs = list((tmp_path / "logs").glob("game-*.jsonl"))
    lines = [json.loads(x) for x in logs[0].read_text().splitlines()]
    assert [e["type"] for e in lines] == ["new_game", "rejected"]


def test_serve_goes_on_without_the_page_when_it_cannot_listen(tmp_path):
    # 192.0.2.1 (TEST-NET-1) is an address this machine does not have.
    proc = serve(tmp_path, "--page", "192.0.2.1:8080")
    try:
        m, lines = read_until(proc, r"table page not served|ready")
        if "not served" in m.group(0):  # said once, and tried again meanwhile
            assert "table page not served yet: cannot listen on 192.0.2.1:8080" in lines[-1]
            assert "trying again every 2-30 s" in lines[-1]
            read_until(proc, "ready")
        else:  # some sandboxes let any address bind; then it simply serves
            assert any("table page" in x for x in lines)
        time.sleep(1)  # serve installs its SIGTERM handler just after "ready"
    finally:
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err


def test_sim_serves_the_page_on_127_0_0_1_with_the_given_pin(tmp_path):
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "companion", "sim", "--page", f"127.0.0.1:{port}", "--pin",
         "2580", "--log", str(tmp_path / "game-1.jsonl")],
        cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        text=True,
    )
    try:
        m, _ = read_until(proc, r"Table page (http://\S+) PIN (\d+)")
        url = m.group(1)
        assert url == f"http://127.0.0.1:{port}/" and m.group(2) == "2580"
        h = {"X-Vault-Companion": "1"}
        status, _, headers = request(url + "api/pair", {"pin": "2580"}, h)
        cookie = headers["Set-Cookie"].split(";")[0]
        status, body, _ = request(url + "api/events", {"command": "new 3 Ann Bob Cat"}, h,
                                  cookie)
        assert status == 200 and body["state"]["seats"][2]["name"] == "Cat"
    finally:
        proc.stdin.write("quit\n")
        proc.stdin.flush()
        proc.wait(timeout=30)
    assert proc.returncode == 0
    assert '"new_game"' in (tmp_path / "game-1.jsonl").read_text()


def test_a_damaged_log_offers_the_page_keep_or_new(tmp_path):
    from game_builders import ROW5, new_game

    from companion.gamelog import GameLog

    logs = tmp_path / "logs"
    logs.mkdir()
    path = logs / "game-20261123-000000.jsonl"
    with GameLog(path, background=False) as log:
        log.append(new_game(2))
        log.append({"type": "heist_hide", "row": ROW5})
        log.append({"type": "heist_attempt", "flips": [{"seat": 1, "stop": True}]})
    lines = path.read_text().splitlines()
    lines[1] = lines[1].replace('"alarm"', '"diamond"', 1)  # an edit the chain catches
    path.write_text("\n".join(lines) + "\n")

    port = free_port()
    proc = serve(tmp_path, "--page", f"127.0.0.1:{port}")
    try:
        m, _ = read_until(proc, r"table page (http://\S+) PIN (\d{4})")
        url, pin = m.group(1), m.group(2)
        read_until(proc, "ready")
        status, state, _ = request(url + "api/state")
        offer = state["resume_choice"]
        assert status == 200 and offer["damaged_line"] == 2 and offer["options"] == ["keep", "new"]
        assert state["phase"] == "heist_hide"  # the game up to line 1 goes on meanwhile
        h = {"X-Vault-Companion": "1"}
        body = {"type": "resume_choice", "choice": "new"}
        assert request(url + "api/events", body, h)[0] == 401  # unpaired: no say
        status, _, headers = request(url + "api/pair", {"pin": pin}, h)
        cookie = headers["Set-Cookie"].split(";")[0]
        bad = {"type": "resume_choice", "choice": "maybe"}
        status, answer, _ = request(url + "api/events", bad, h, cookie)
        assert status == 400 and "keep" in answer["error"]
        status, answer, _ = request(url + "api/events", body, h, cookie)
        assert status == 200 and answer["accepted"] and answer["message"].startswith("new game")
        assert answer["state"]["resume_choice"] is None
        assert answer["state"]["phase"] == "no_game"
        status, answer, _ = request(url + "api/events", body, h, cookie)
        assert status == 409 and "no choice pending" in answer["rejected"]
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.communicate(timeout=30)
    assert (logs / (path.name + ".damaged")).exists()
    assert (logs / (path.name + ".kept")).exists()
