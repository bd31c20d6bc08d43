#!/usr/bin/env python3
"""Time to first token of a chat's second turn, when its prompt diverges inside the first reply.

  scripts/bench-two-turn.py --engine sinter --url http://127.0.0.1:8080 --model NAME
  scripts/bench-two-turn.py --engine llama-server --url http://127.0.0.1:8081

Turn one sends a prompt of about --prompt-words words and takes a greedy reply of --reply tokens.
Turn two sends turn one's prompt, the first half of the reply (as a client does that edits or
trims a reply: a template dropping the thinking part, say) and a new user line, so it shares
with what the server holds everything up to the middle of the reply. A recurrent or hybrid model
cannot cut its state back there: the server must resume from a state it kept earlier, or start
again from scratch. Prints one JSON line per round: each turn's time to first token (streamed,
seen by the client), the prompt tokens it reports, and those it says it took from its cache.

Both engines get token ids, each tokenizing the text itself (a random-weight model's reply does
not survive a trip through text unchanged): sinter's /api/generate with `context` and raw,
llama-server's /completion with cache_prompt. Needs only the standard library.
"""
import argparse
import json
import time
import urllib.request

WORDS = ("the river ran past an old mill where a girl named Mira kept a ledger of every boat "
         "that passed and the goods it carried salt wool iron and once a crate of oranges").split()


def prompt_text(words, round_index):
    # Different text each round, so no round starts from another's cache.
    body = " ".join(WORDS[(i * 7 + round_index) % len(WORDS)] for i in range(words))
    return f"User: Round {round_index}. Summarize this log.\n{body}\nAssistant:"


def post(args, path, body):
    request = urllib.request.Request(args.url + path, json.dumps(body).encode(), {"Content-Type": "application/json"})
    return urllib.request.urlopen(request, timeout=900)


def tokenize(args, text):
    if args.engine == "sinter":
        return json.load(post(args, "/api/tokenize", {"model": args.model, "content": text}))["tokens"]
    return json.load(post(args, "/tokenize", {"content": text, "add_special": True}))["tokens"]


def stream(args, prompt, n):
    """(seconds to the first token, generated token ids, prompt tokens, cached tokens) of one
    streamed request whose prompt is token ids."""
    if args.engine == "sinter":
        path, body = "/api/generate", {"model": args.model, "prompt": "", "context": prompt, "raw": True,
                                       "stream": True, "options": {"temperature": 0, "num_predict": n}}
    else:
        path, body = "/completion", {"prompt": prompt, "n_predict": n, "stream": True, "cache_prompt": True,
                                     "return_tokens": True, "temperature": 0, "top_k": 1,
                                     "ignore_eos": True}
    start = time.time()
    first = None
    tokens = []
    prompt_tokens = cached = None
    with post(args, path, body) as answer:
        for raw in answer:
            line = raw.decode().strip()
            if line.startswith("data: "):
                line = line[6:]
            if not line.startswith("{"):  # [DONE], SSE comments and event names
                continue
            chunk = json.loads(line)
            if first is None and (chunk.get("response") or chunk.get("content") or chunk.get("tokens")):
                first = time.time() - start
            if args.engine == "sinter" and chunk.get("done"):
                prompt_tokens = chunk.get("prompt_eval_count")
                tokens = chunk["context"][len(prompt):]
            if args.engine != "sinter":
                tokens += chunk.get("tokens", [])
                if chunk.get("stop"):
                    timings = chunk.get("timings", {})
                    prompt_tokens = timings.get("prompt_n", 0) + timings.get("cache_n", 0)
                    cached = timings.get("cache_n")
    return first, tokens, prompt_tokens, cached


def reused_total(args):
    """sinter: its counter of prompt tokens taken from the cache."""
    metrics = urllib.request.urlopen(args.url + "/metrics", timeout=30).read().decode()
    total = 0.0
    for line in metrics.splitlines():
        if line.startswith("sinter_prompt_tokens_reused_total"):
            total += float(line.split()[-1])
    return total


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--engine", choices=["sinter", "llama-server"], required=True)
    parser.add_argument("--url", required=True)
    parser.add_argument("--model", default="")
    parser.add_argument("--prompt-words", type=int, default=700)
    parser.add_argument("--reply", type=int, default=96)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    for round_index in range(args.rounds):
        prompt = tokenize(args, prompt_text(args.prompt_words, round_index))
        ttft1, reply, n1, _ = stream(args, prompt, args.reply)
        # The client keeps the first half of the reply and adds a turn of its own.
        second = prompt + reply[: len(reply) // 2] + tokenize(args, "\nUser: And the oranges?\nAssistant:")[1:]
        between = reused_total(args) if args.engine == "sinter" else 0
        ttft2, _, n2, cached2 = stream(args, second, 8)
        if args.engine == "sinter":
            cached2 = reused_total(args) - between
        print(json.dumps({"engine": args.engine, "round": round_index, "turn1_ttft_s": round(ttft1, 3),
                          "turn1_prompt_tokens": n1, "reply_tokens": len(reply), "turn2_ttft_s": round(ttft2, 3),
                          "turn2_prompt_tokens": n2, "turn2_cached_tokens": cached2}), flush=True)

if __name__ == "__main__":
    main()
