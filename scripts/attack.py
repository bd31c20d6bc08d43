#!/usr/bin/env python3
"""The attack set of docs/RELIABILITY.md, replayed against `sinter` (not run by CI).

  scripts/attack.py [--sinter build/bin/sinter] [--files 300] [--quick] [--sections files,server,signals,round2]

1. Malformed model files: a random-weight model written by `sinter synth`, corrupted in many
   ways (byte flips in the header and metadata, truncations, huge counts); `sinter inspect` and
   `sinter run` on each must exit with a clear error (no crash, no hang).
2. A server on 127.0.0.1 under attack while good requests run beside it: slowloris (headers and
   bodies a byte at a time), a 256 MiB chunked body, a header flood, template bombs, endless
   requests whose clients leave, malformed requests; every good request must succeed and the
   server's peak memory stay bounded.
3. Signals: SIGTERM with streams running and queued (each ends with a final object, exit 0,
   idle connections closed at once); SIGHUP the same.
4. Round two (issue 39): JSON nested deep enough to overflow any recursive walk, on every path
   of both chat APIs and in a store's layers; 64 worst-case requests at once (16 MiB bodies of
   empty arrays, deep JSON, Jinja memory bombs, GBNF and schema-pattern grammar bombs) beside a
   plain request whose latency is measured; the process out of descriptors; clients that do not
   read their answers; silent sockets at the per-client cap; HTTP/1.0 hang-ups; pipelining after
   a half-close; shutdown with a stream nobody reads; a model file truncated under the server;
   200 broken store manifests; one request asking for n x max_tokens with logprobs.

Traffic goes to loopback addresses only, every loop is bounded in count and time.
"""
import argparse
import json
import os
import random
import resource
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.parse
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
    def __init__(self, sinter, args, model=STORIES, stderr=subprocess.DEVNULL, preexec_fn=None):
        source = ["-m", model] if model else []
        self.proc = subprocess.Popen([sinter, "serve", *source, "--port", "0", *args],
                                     stdout=subprocess.PIPE, stderr=stderr, text=True, preexec_fn=preexec_fn)
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


def good_request(url, source=None):
    """A plain generation; `source`: the local address to send from (another client than the attackers)."""
    import http.client
    import io
    body = json.dumps({"model": "stories260K", "prompt": "Once upon a time", "stream": False,
                       "options": {"num_predict": 8, "temperature": 0}}).encode()
    host, port = urllib.parse.urlsplit(url).hostname, urllib.parse.urlsplit(url).port
    connection = http.client.HTTPConnection(host, port, timeout=60,
                                            source_address=(source, 0) if source else None)
    try:
        connection.request("POST", "/api/generate", body, {"Content-Type": "application/json"})
        answer = connection.getresponse()
        data = answer.read()
        if answer.status != 200:
            raise urllib.error.HTTPError(url, answer.status, answer.reason, answer.headers, io.BytesIO(data))
        return json.loads(data)["done"] is True
    finally:
        connection.close()


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


# --- round two (issue 39) ---------------------------------------------------------------------

def post(url, path, body, timeout=120, headers=None):
    """(status, body bytes, headers) of a POST; status -1 when the connection failed."""
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    request = urllib.request.Request(url + path, data, {"Content-Type": "application/json", **(headers or {})})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as answer:
            return answer.status, answer.read(), dict(answer.headers)
    except urllib.error.HTTPError as error:
        return error.code, error.read(), dict(error.headers)
    except Exception as error:  # connection reset, timeout: the server may be gone
        return -1, str(error).encode(), {}


def plain_latency(url, source=None, refusals=None):
    """Seconds a plain request takes (following Retry-After on 503, as a client should), or None.
    `refusals`: a list to which the number of 503 answers it followed is appended."""
    start = time.time()
    followed = 0
    result = None
    while followed < 30:
        try:
            result = time.time() - start if good_request(url, source) else None
            break
        except urllib.error.HTTPError as error:
            if error.code != 503:
                break
            followed += 1
            time.sleep(float(error.headers.get("Retry-After", "1")))
        except Exception:
            break
    if refusals is not None:
        refusals.append(followed)
    return result


def deep(n):
    return "[" * n + "]" * n


def threads_of(pid):
    for line in open(f"/proc/{pid}/status"):
        if line.startswith("Threads:"):
            return int(line.split()[1])
    return 0


def attack_nesting(sinter):
    server = Server(sinter, ["--parallel", "1", "-t", "1"])
    d150k, d1m = deep(150000), deep(1000000)
    message = '{"role": "user", "content": "Once", "unused": %s}' % d150k
    cases = {
        "ollama chat, unused field 150k deep": ("/api/chat", '{"model": "stories260K", "stream": false, "messages": [%s]}' % message),
        "openai chat, unused field 150k deep": ("/v1/chat/completions", '{"model": "stories260K", "messages": [%s]}' % message),
        "tools 1M deep": ("/v1/chat/completions", '{"model": "stories260K", "messages": [{"role": "user", "content": "x"}], "tools": %s}' % d1m),
        "chat_template_kwargs 1M deep": ("/v1/chat/completions", '{"model": "stories260K", "messages": [{"role": "user", "content": "x"}], "chat_template_kwargs": {"a": %s}}' % d1m),
        "ollama tool-call arguments 1M deep": ("/api/chat", '{"model": "stories260K", "stream": false, "messages": [{"role": "assistant", "content": "", "tool_calls": [{"function": {"name": "f", "arguments": {"a": %s}}}]}]}' % d1m),
        "openai tool-call arguments (a string) 20k deep": ("/v1/chat/completions", json.dumps({"model": "stories260K", "messages": [{"role": "user", "content": "x"}, {"role": "assistant", "content": "", "tool_calls": [{"id": "c", "type": "function", "function": {"name": "f", "arguments": deep(20000)}}]}]})),
        "go template, tool-call arguments 20k deep": ("/api/chat", '{"model": "stories260K", "stream": false, "template": "{{ range .Messages }}{{ range .ToolCalls }}{{ .Function.Arguments }}{{ end }}{{ end }}", "messages": [{"role": "assistant", "content": "", "tool_calls": [{"function": {"name": "f", "arguments": {"a": %s}}}]}]}' % deep(20000)),
    }
    statuses = {}
    for name, (path, body) in cases.items():
        status, answer, _ = post(server.url, path, body.encode())
        statuses[name] = status
    alive = server.proc.poll() is None and good_request(server.url)
    result = {"statuses": statuses, "server_alive_after": alive, "exit_status": server.stop()}
    return result


def write_store(root, broken_manifests):
    """An Ollama store with stories260K, a model whose params layer nests 150k deep, and broken manifests."""
    import hashlib
    blobs = os.path.join(root, "blobs")
    os.makedirs(blobs, exist_ok=True)

    def layer(kind, content):
        digest = hashlib.sha256(content).hexdigest()
        with open(os.path.join(blobs, "sha256-" + digest), "wb") as f:
            f.write(content)
        return {"mediaType": "application/vnd.ollama.image." + kind, "digest": "sha256:" + digest, "size": len(content)}

    def manifest(name, layers, padding=0):
        folder = os.path.join(root, "manifests", "registry.ollama.ai", "library", name)
        os.makedirs(folder, exist_ok=True)
        body = {"schemaVersion": 2, "config": layer("config", b"{}"), "layers": layers}
        if padding:
            body["padding"] = "x" * padding
        with open(os.path.join(folder, "latest"), "w") as f:
            json.dump(body, f)

    weights = layer("model", open(STORIES, "rb").read())
    manifest("stories", [weights])
    manifest("deepparams", [weights, layer("params", ('{"stop": %s}' % deep(150000)).encode())])
    missing = dict(weights, digest="sha256:" + "b" * 64)
    for i in range(broken_manifests):
        manifest("broken%03d" % i, [missing], padding=900000)  # near the 1 MiB manifest limit


def attack_store(sinter, workdir):
    root = os.path.join(workdir, "store")
    write_store(root, 200)
    server = Server(sinter, ["--ollama-models", root, "--parallel", "1", "-t", "1"], model=None)
    timings = []
    for _ in range(3):
        start = time.time()
        try:
            with urllib.request.urlopen(server.url + "/api/tags", timeout=120) as answer:
                names = [m["name"] for m in json.load(answer)["models"]]
        except Exception:
            names = []
        timings.append(round(time.time() - start, 3))
    result = {"tags_seconds": timings, "models_listed": len(names), "server_alive": server.proc.poll() is None,
              "exit_status": server.stop()}
    # The deep layer crashed every scan, after every restart: start it again.
    again = Server(sinter, ["--ollama-models", root, "--parallel", "1", "-t", "1"], model=None)
    result["alive_after_restart"] = again.proc.poll() is None
    again.stop()
    return result


GBNF_BOMB = "root ::= (" + " | ".join(['"x"'] * 1000) + ")*"
JINJA_BOMBS = [
    "{% set ns = namespace(s='x') %}{% for i in range(26) %}{% set ns.s = ns.s ~ ns.s %}{% endfor %}{{ ns.s|length }}",
    "{% set ns = namespace(a=[]) %}{% for i in range(300000) %}{% set ns.a = ns.a + ['%0100d' % i] %}{% endfor %}{{ ns.a|length }}",
]


def worst_case_requests(url, count, stop):
    """`count` worst-case requests at once, repeated until `stop`; their statuses."""
    empty_arrays = b'{"model": "stories260K", "prompt": "x", "unused": [' + b"[]," * ((16 << 20) // 3 - 20) + b"[]]}"
    deep_json = ('{"model": "stories260K", "prompt": "x", "unused": %s}' % deep(150000)).encode()
    kinds = [
        ("/api/generate", empty_arrays),
        ("/api/generate", deep_json),
        ("/api/chat", json.dumps({"model": "stories260K", "stream": False, "template": JINJA_BOMBS[0],
                                  "messages": [{"role": "user", "content": "x"}]}).encode()),
        ("/api/chat", json.dumps({"model": "stories260K", "stream": False, "template": JINJA_BOMBS[1],
                                  "messages": [{"role": "user", "content": "x"}]}).encode()),
        ("/v1/completions", json.dumps({"model": "stories260K", "prompt": "x", "max_tokens": 30,
                                        "grammar": GBNF_BOMB}).encode()),
        ("/v1/chat/completions", json.dumps({"model": "stories260K", "max_tokens": 30,
                                             "messages": [{"role": "user", "content": "x"}],
                                             "response_format": {"type": "json_schema", "json_schema": {"name": "p", "schema": {
                                                 "type": "string", "pattern": "^(" + "|".join(["x"] * 500) + ")*$"}}}}).encode()),
    ]
    statuses, longest = {}, {}
    lock = threading.Lock()

    def one(i):
        while not stop.is_set():
            path, body = kinds[i % len(kinds)]
            start = time.time()
            status, _, headers = post(url, path, body, timeout=300)
            with lock:
                key = f"{path} #{i % len(kinds)}: {status}"
                statuses[key] = statuses.get(key, 0) + 1
                longest[key] = round(max(longest.get(key, 0), time.time() - start), 2)

    threads = [threading.Thread(target=one, args=(i,), daemon=True) for i in range(count)]
    for t in threads:
        t.start()
    return threads, statuses, longest


def attack_worst_case(sinter, seconds):
    server = Server(sinter, ["--parallel", "4", "-t", "2", "--max-queue", "256"])
    stop = threading.Event()
    threads, statuses, longest = worst_case_requests(server.url, 64, stop)
    latencies, refusals = [], []
    end = time.time() + seconds
    while time.time() < end:
        # From another address than the 64 attackers, who fill their address's connection cap.
        latencies.append(plain_latency(server.url, "127.0.0.9", refusals))
        time.sleep(0.5)
    stop.set()
    for t in threads:
        t.join()
    metrics = urllib.request.urlopen(server.url + "/metrics", timeout=30).read().decode()
    gauges = {line.split()[0]: float(line.split()[1]) for line in metrics.splitlines()
              if line.startswith("sinter_request_memory")}
    ok = [x for x in latencies if x is not None]
    return {"concurrent": 64, "seconds": seconds, "statuses": statuses, "longest_s": longest,
            "plain_requests": len(latencies), "plain_failed": len(latencies) - len(ok),
            "plain_latency_max_s": round(max(ok), 2) if ok else None,
            "plain_latency_median_s": round(sorted(ok)[len(ok) // 2], 2) if ok else None,
            "plain_503_followed": sum(refusals), "plain_503_most": max(refusals, default=0),
            "plain_latency_max_without_503_s": round(max((x for x, r in zip(latencies, refusals)
                                                         if x is not None and r == 0), default=0), 2),
            "peak_rss_mib": round(server.peak_rss() / 2**20, 1),
            "request_memory_limit_mib": round(gauges.get("sinter_request_memory_limit_bytes", 0) / 2**20, 1),
            "request_memory_peak_mib": round(gauges.get("sinter_request_memory_peak_bytes", 0) / 2**20, 1),
            "exit_status": server.stop()}


def attack_grammar_stall(sinter):
    server = Server(sinter, ["--parallel", "2", "-t", "1"])
    alone = plain_latency(server.url)
    result = {}
    bomb = threading.Thread(target=lambda: result.update(bomb=post(server.url, "/v1/completions", {
        "model": "stories260K", "prompt": "x", "max_tokens": 30, "grammar": GBNF_BOMB}, timeout=300)[0]))
    start = time.time()
    bomb.start()
    time.sleep(0.2)
    beside = plain_latency(server.url)
    bomb.join()
    return {"plain_alone_s": round(alone, 3), "plain_beside_bomb_s": round(beside, 3) if beside else None,
            "bomb_status": result.get("bomb"), "bomb_seconds": round(time.time() - start, 2),
            "exit_status": server.stop()}


def attack_connections(sinter, workdir):
    result = {}
    log_path = os.path.join(workdir, "emfile.log")
    # Out of descriptors: a soft limit of 256 (so the caps derived from it, and beyond them).
    with open(log_path, "w") as log:
        server = Server(sinter, ["--parallel", "1", "-t", "1", "-v"], stderr=log,
                        preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_NOFILE, (256, 256)))
        held = []
        for i in range(400):
            try:
                held.append(connect(server.port, f"127.0.0.{2 + i % 8}"))
            except OSError:
                pass
        start = time.time()
        result["emfile_good_request_ok"] = plain_latency(server.url) is not None
        result["emfile_good_request_s"] = round(time.time() - start, 2)
        time.sleep(2)
        for s in held:
            s.close()
        result["emfile_connections_opened"] = len(held)
        result["emfile_exit_status"] = server.stop()
    result["emfile_log_bytes"] = os.path.getsize(log_path)

    # Shifting past the context, so that endless requests stay endless (stories260K's context is 512).
    server = Server(sinter, ["--parallel", "1", "-t", "1", "--shutdown-grace", "1s", "--overflow", "shift",
                             "--max-tokens", "1000000"])
    # Clients that ask for a large answer and never read it.
    sleepers = []
    body = json.dumps({"model": "stories260K", "prompt": "Once", "max_tokens": 1500, "logprobs": True,
                       "top_logprobs": 20, "temperature": 0}).encode()
    for i in range(40):
        s = socket.socket()
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        s.bind((f"127.0.0.{2 + i % 4}", 0))
        s.connect(("127.0.0.1", server.port))
        s.send(b"POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n" % len(body) + body)
        sleepers.append(s)
    time.sleep(2)
    result["non_reading_clients"] = len(sleepers)
    result["server_threads_with_them"] = threads_of(server.proc.pid)
    result["plain_beside_non_readers_s"] = plain_latency(server.url, "127.0.0.9")
    # Their answers are written by the I/O thread as they are read: once generated, no worker
    # waits for them, and idle workers leave.
    start = time.time()
    while time.time() - start < 120 and threads_of(server.proc.pid) > 8:
        time.sleep(1)
    result["server_threads_after_their_answers"] = threads_of(server.proc.pid)
    result["seconds_until_workers_left"] = round(time.time() - start, 1)
    for s in sleepers:
        s.close()
    # 64 silent sockets from one address, then a request from that address.
    silent = [connect(server.port) for _ in range(64)]
    result["plain_after_64_silent_ok"] = plain_latency(server.url) is not None
    time.sleep(12)
    closed = 0
    for s in silent:
        s.settimeout(0.1)
        try:
            closed += s.recv(1) == b""
        except OSError:
            pass
        s.close()
    result["silent_closed_by_server_after_12s"] = closed
    # Pipelined requests, then a half-close.
    s = connect(server.port)
    s.send(b"GET /health HTTP/1.1\r\nHost: x\r\n\r\nGET /health HTTP/1.1\r\nHost: x\r\n\r\n")
    s.shutdown(socket.SHUT_WR)
    data = b""
    while True:
        got = s.recv(65536)
        if not got:
            break
        data += got
    result["pipelined_after_half_close_answers"] = data.count(b"HTTP/1.1 200")
    # An HTTP/1.0 client that hangs up.
    def cancelled():
        metrics = urllib.request.urlopen(server.url + "/metrics", timeout=30).read().decode()
        for line in metrics.splitlines():
            if line.startswith('sinter_requests_cancelled_total{model="stories260K"}'):
                return float(line.split()[1])
        return 0.0

    before = cancelled()
    s = connect(server.port)
    body = json.dumps({"model": "stories260K", "prompt": "x", "stream": False, "options": {"num_predict": 100000}}).encode()
    s.send(b"POST /api/generate HTTP/1.0\r\nContent-Length: %d\r\n\r\n" % len(body) + body)
    time.sleep(1)
    s.close()
    time.sleep(1)
    result["http10_hangup_cancelled"] = cancelled() == before + 1
    # Shutdown with a stream nobody reads.
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    s.connect(("127.0.0.1", server.port))
    body = json.dumps({"model": "stories260K", "prompt": "x", "options": {"num_predict": 1000000}}).encode()
    s.send(b"POST /api/generate HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n" % len(body) + body)
    time.sleep(3)
    start = time.time()
    result["shutdown_exit_status"] = server.stop(timeout=60)
    result["shutdown_seconds_with_non_reader"] = round(time.time() - start, 2)
    s.close()
    return result


def attack_truncation(sinter, workdir):
    path = os.path.join(workdir, "stories-copy.gguf")
    shutil.copy(STORIES, path)
    server = Server(sinter, ["--parallel", "1", "-t", "1", "--overflow", "shift", "--max-tokens", "100000"], model=path)
    first = post(server.url, "/api/generate", {"model": "stories-copy", "prompt": "x", "stream": False,
                                                "options": {"num_predict": 4}})[0] == 200
    streamer = threading.Thread(target=lambda: post(server.url, "/api/generate", {
        "model": "stories-copy", "prompt": "Once", "stream": False, "options": {"num_predict": 20000}}, timeout=120))
    streamer.start()
    time.sleep(0.5)
    os.truncate(path, 4096)
    streamer.join()
    status_truncated, _, _ = post(server.url, "/api/generate", {"model": "stories-copy", "prompt": "x", "stream": False})
    alive = server.proc.poll() is None
    shutil.copy(STORIES, path)
    status_restored, _, _ = post(server.url, "/api/generate", {"model": "stories-copy", "prompt": "x", "stream": False,
                                                              "options": {"num_predict": 4}})
    return {"first_ok": first, "alive_after_truncation": alive, "status_while_truncated": status_truncated,
            "status_after_restore": status_restored, "exit_status": server.stop()}


def attack_one_request_share(sinter):
    server = Server(sinter, ["--parallel", "4", "-t", "2"])
    result = {}

    def big():
        start = time.time()
        status, body, _ = post(server.url, "/v1/chat/completions", {
            "model": "stories260K", "messages": [{"role": "user", "content": "Once"}], "n": 4,
            "max_tokens": 32768, "logprobs": True, "top_logprobs": 20, "logit_bias": {"2": -100}}, timeout=900)
        result.update(status=status, seconds=round(time.time() - start, 1), answer_mib=round(len(body) / 2**20, 1))

    t = threading.Thread(target=big)
    t.start()
    time.sleep(2)
    result["plain_beside_s"] = plain_latency(server.url)
    t.join()
    time.sleep(1)
    for line in open(f"/proc/{server.proc.pid}/status"):
        if line.startswith("VmRSS:"):
            result["rss_after_mib"] = round(int(line.split()[1]) / 1024, 1)
    result["peak_rss_mib"] = round(server.peak_rss() / 2**20, 1)
    result["exit_status"] = server.stop()
    return result


def attack_round_two(sinter, quick, workdir):
    report = {"nesting": attack_nesting(sinter), "store": attack_store(sinter, workdir),
              "grammar_stall": attack_grammar_stall(sinter),
              "worst_case": attack_worst_case(sinter, 20 if quick else 60),
              "connections": attack_connections(sinter, workdir), "truncation": attack_truncation(sinter, workdir),
              "one_request_share": attack_one_request_share(sinter)}
    return report


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--sinter", default=os.path.join(ROOT, "build", "bin", "sinter"))
    parser.add_argument("--files", type=int, default=300)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--sections", default="files,server,signals,round2")
    args = parser.parse_args()
    sections = set(args.sections.split(","))
    report = {}
    with tempfile.TemporaryDirectory() as workdir:
        if "files" in sections:
            report["files"] = attack_files(args.sinter, args.files, workdir)
        if "server" in sections:
            report["server"] = attack_server(args.sinter, args.quick)
        if "signals" in sections:
            report["sigterm"] = attack_signals(args.sinter, signal.SIGTERM)
            report["sighup"] = attack_signals(args.sinter, signal.SIGHUP)
        if "round2" in sections:
            report["round2"] = attack_round_two(args.sinter, args.quick, workdir)
    print(json.dumps(report, indent=2))
    bad = 0
    if "files" in report:
        bad += report["files"]["crashes"] + report["files"]["hangs"]
    if "server" in report:
        bad += report["server"]["good_lost"]
    for key in ("sigterm", "sighup"):
        if key in report:
            bad += report[key]["without_final_object"]
    if "round2" in report:
        r = report["round2"]
        bad += (not r["nesting"]["server_alive_after"]) + (not r["store"]["alive_after_restart"])
        bad += r["worst_case"]["plain_failed"] + (not r["truncation"]["alive_after_truncation"])
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
