#!/usr/bin/env python3
"""The attack set of docs/RELIABILITY.md, replayed against `sinter` (not run by CI).

  scripts/attack.py [--sinter build/bin/sinter] [--files 300] [--quick]

1. Malformed model files: a random-weight model written by `sinter synth`, corrupted in many
   ways (byte flips in the header and metadata, truncations, huge counts); `sinter inspect` and
   `sinter run` on each must exit with a clear error (no crash, no hang).
2. A server on 127.0.0.1 under attack while good requests run beside it: slowloris (headers and
   bodies a byte at a time), a 256 MiB chunked body, a header flood, template bombs, endless
   requests whose clients leave, malformed requests; every good request must succeed and the
   server's peak memory stay bounded.
3. Signals: SIGTERM with streams running and queued (each ends with a final object, exit 0,
   idle connections closed at once); SIGHUP the same.

Traffic goes to loopback addresses only, every loop is bounded in count and time.
"""
import argparse
import json
import os
import random
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SHARED = os.environ.get("SINTER_SHARED", os.path.join(ROOT, "..", "shared"))
STORIES = os.path.join(SHARED, "models", "stories260K.gguf")


def run(cmd, timeout):
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout)
        return p.returncode, p.stderr
    except subprocess.TimeoutExpired:
        return "hang", b""


def corruptions(data, rng, count):
    """Corrupted copies of a GGUF file's bytes."""
    header_end = min(len(data), 4096)
    for i in range(count):
        kind = i % 5
        out = bytearray(data)
        if kind == 0:  # byte flips in the header and metadata
            for _ in range(rng.randint(1, 8)):
                out[rng.randrange(header_end)] = rng.randrange(256)
        elif kind == 1:  # truncation
            out = out[: rng.randrange(len(out))]
        elif kind == 2:  # a huge 64-bit count or length somewhere in the header
            at = rng.randrange(8, header_end - 8)
            out[at : at + 8] = struct.pack("<Q", rng.choice([2**31, 2**32 - 1, 2**63, 10**6, 10**12]))
        elif kind == 3:  # a huge 32-bit value (a hyper-parameter)
            at = rng.randrange(8, header_end - 4)
            out[at : at + 4] = struct.pack("<I", rng.choice([2**31, 2**32 - 1, 10**5, 0]))
        else:  # NaN/Inf floats
            at = rng.randrange(8, header_end - 4)
            out[at : at + 4] = struct.pack("<f", rng.choice([float("nan"), float("inf"), -float("inf")]))
        yield bytes(out)


def attack_files(sinter, count, workdir):
    model = os.path.join(workdir, "base.gguf")
    subprocess.run([sinter, "synth", "llama", model, "--dims", "tiny"], check=True, stdout=subprocess.DEVNULL)
    data = open(model, "rb").read()
    rng = random.Random(1)
    crashes = hangs = 0
    worst_error = 0
    path = os.path.join(workdir, "bad.gguf")
    for blob in corruptions(data, rng, count):
        with open(path, "wb") as f:
            f.write(blob)
        for cmd in ([sinter, "inspect", path], [sinter, "inspect", "--json", path], [sinter, "run", "-m", path, "-n", "2", "-p", "x"]):
            code, err = run(cmd, 30)
            if code == "hang":
                hangs += 1
            elif code < 0 or code >= 128:
                crashes += 1
                print("crash:", cmd, code, err[-300:], file=sys.stderr)
            worst_error = max(worst_error, len(err))
    return {"files": count, "commands": 3 * count, "crashes": crashes, "hangs": hangs, "longest_stderr_bytes": worst_error}


class Server:
    def __init__(self, sinter, args):
        self.proc = subprocess.Popen([sinter, "serve", "-m", STORIES, "--port", "0", *args],
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        line = self.proc.stdout.readline()
        self.url = line.strip().split()[-1]
        self.port = int(self.url.rsplit(":", 1)[1])
        for _ in range(200):
            try:
                if urllib.request.urlopen(self.url + "/health", timeout=2).status == 200:
                    break
            except Exception:
                time.sleep(0.05)

    def peak_rss(self):
        for line in open(f"/proc/{self.proc.pid}/status"):
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
        return 0

    def stop(self, sig=signal.SIGTERM, timeout=30):
        self.proc.send_signal(sig)
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            return "hang"


def good_request(url):
    body = json.dumps({"model": "stories260K", "prompt": "Once upon a time", "stream": False,
                       "options": {"num_predict": 8, "temperature": 0}}).encode()
    request = urllib.request.Request(url + "/api/generate", body, {"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=60) as answer:
        return json.load(answer)["done"] is True


def connect(port, source="127.0.0.1"):
    s = socket.socket()
    s.bind((source, 0))
    s.settimeout(10)
    s.connect(("127.0.0.1", port))
    return s


def attack_server(sinter, quick):
    server = Server(sinter, ["--parallel", "2", "-t", "1", "--max-body", str(1 << 20), "--overflow", "shift",
                             "--max-tokens", "4096", "--header-timeout", "5s", "--body-timeout", "10s"])
    stop = threading.Event()
    results = {"good_ok": 0, "good_lost": 0}

    def good_loop():
        while not stop.is_set():
            try:
                ok = good_request(server.url)
                results["good_ok" if ok else "good_lost"] += 1
            except Exception as error:
                results["good_lost"] += 1
                print("good request lost:", error, file=sys.stderr)

    def slowloris():
        sockets = []
        for i in range(64):
            try:
                s = connect(server.port, f"127.0.0.{2 + i % 4}")
                sockets.append(s)
            except OSError:
                pass
        for step in range(20 if quick else 60):
            for s in sockets:
                try:
                    s.send(b"G" if step == 0 else b"x")
                except OSError:
                    pass
            time.sleep(1)
        for s in sockets:
            s.close()

    def chunked_flood():
        s = connect(server.port)
        s.send(b"POST /api/generate HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n")
        chunk = b"%x\r\n" % (1 << 20) + b" " * (1 << 20) + b"\r\n"
        sent = 0
        try:
            for _ in range(256):
                s.sendall(chunk)
                sent += 1
        except OSError:
            pass
        s.close()
        results["chunked_mib_sent_before_close"] = sent

    def header_flood():
        s = connect(server.port)
        try:
            s.send(b"GET /health HTTP/1.1\r\nHost: x\r\n")
            for i in range(1000):
                s.sendall(b"".join(b"X-%d: %d\r\n" % (i * 1000 + j, j) for j in range(1000)))
        except OSError:
            pass
        s.close()

    def template_bombs():
        for template in ["{{ x }}" * 60000, "a" * 400000, "{{- range .Messages }}{{ .Content }}" * 20000 + "{{ end }}" * 20000,
                         "{% for i in range(100000000) %}x{% endfor %}", "{{ 'x' * 1000000000 }}"]:
            body = json.dumps({"model": "stories260K", "prompt": "hi", "template": template, "stream": False}).encode()
            try:
                urllib.request.urlopen(urllib.request.Request(server.url + "/api/generate", body), timeout=60)
            except Exception:
                pass

    def endless_requests():
        for _ in range(4):
            s = connect(server.port)
            body = json.dumps({"model": "stories260K", "prompt": "x", "stream": False,
                               "options": {"num_predict": 1000000000}}).encode()
            s.send(b"POST /api/generate HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n" % len(body) + body)
            time.sleep(1)
            s.close()

    def malformed():
        rng = random.Random(2)
        for _ in range(2000):
            try:
                s = connect(server.port)
                s.send(bytes(rng.randrange(256) for _ in range(rng.randrange(1, 300))) + b"\r\n\r\n")
                s.recv(4096)
                s.close()
            except OSError:
                pass

    goods = [threading.Thread(target=good_loop) for _ in range(2)]
    attacks = [threading.Thread(target=f) for f in (slowloris, chunked_flood, header_flood, template_bombs,
                                                  endless_requests, malformed)]
    for t in goods + attacks:
        t.start()
    for t in attacks:
        t.join()
    stop.set()
    for t in goods:
        t.join()
    results["peak_rss_mib"] = round(server.peak_rss() / 2**20, 1)
    results["exit_status"] = server.stop()
    return results


def attack_signals(sinter, sig):
    server = Server(sinter, ["--parallel", "1", "-t", "1", "--overflow", "shift", "--shutdown-grace", "1s",
                             "--max-queue", "128"])
    idle = connect(server.port)
    idle.send(b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n")
    idle.recv(4096)
    streams = []
    body = json.dumps({"model": "stories260K", "prompt": "Once", "options": {"num_predict": 100000}}).encode()
    for i in range(96):
        s = connect(server.port, f"127.0.0.{2 + i % 3}")  # beside the per-client connection cap
        s.send(b"POST /api/generate HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n" % len(body) + body)
        streams.append(s)
    time.sleep(1)
    start = time.time()
    status = server.stop(sig)
    seconds = round(time.time() - start, 2)
    cut_without_final = 0
    refused = 0
    for s in streams:
        data = b""
        try:
            while True:
                got = s.recv(65536)
                if not got:
                    break
                data += got
        except OSError:
            pass
        if data.startswith(b"HTTP/1.1 503"):
            refused += 1  # the queue was full (--max-queue): an error answer, not a stream
            continue
        lines = [line for line in data.split(b"\n") if line.startswith(b"{")]
        last = json.loads(lines[-1]) if lines else {}
        if not last.get("done") or not data.endswith(b"0\r\n\r\n"):
            cut_without_final += 1
            print("stream without a final object:", data[:300], file=sys.stderr)
    return {"signal": signal.Signals(sig).name, "streams": 96, "refused_queue_full": refused,
            "without_final_object": cut_without_final, "exit_status": status, "seconds_to_exit": seconds}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--sinter", default=os.path.join(ROOT, "build", "bin", "sinter"))
    parser.add_argument("--files", type=int, default=300)
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as workdir:
        report = {"files": attack_files(args.sinter, args.files, workdir),
                  "server": attack_server(args.sinter, args.quick),
                  "sigterm": attack_signals(args.sinter, signal.SIGTERM),
                  "sighup": attack_signals(args.sinter, signal.SIGHUP)}
    print(json.dumps(report, indent=2))
    bad = (report["files"]["crashes"] + report["files"]["hangs"] + report["server"]["good_lost"] +
           report["sigterm"]["without_final_object"] + report["sighup"]["without_final_object"])
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
