#!/usr/bin/env python3
"""What each turn of a multi-turn chat re-processes when the template rewrites earlier turns.

  scripts/bench-chat-turns.py --engine sinter --url http://127.0.0.1:8080 --model NAME
  scripts/bench-chat-turns.py --engine llama-server --url http://127.0.0.1:8081

Sends --turns chat turns to /v1/chat/completions (greedy, --reply tokens each). The model's chat
template should drop earlier <think> blocks (Qwen 3's and 3.5's do): each assistant message sent
back carries one, so the next prompt leaves what the server holds (prompt and generated reply)
right after the previous prompt. A hybrid or recurrent model cannot cut its state back there; a
server resumes from a state it kept or re-processes the whole prompt. Prints one JSON line per
turn: prompt tokens, tokens taken from the cache, tokens re-processed, and the time to the first
token seen by the client (streamed). The system message is --system-words words long, so that
re-processing it shows. Needs only the standard library.
"""
import argparse
import json
import time
import urllib.request

WORDS = ("the river ran past an old mill where a girl named Mira kept a ledger of every boat "
         "that passed and the goods it carried salt wool iron and once a crate of oranges").split()


def post(url, body):
    request = urllib.request.Request(url + "/v1/chat/completions", json.dumps(body).encode(),
                                     {"Content-Type": "application/json"})
    return urllib.request.urlopen(request, timeout=1800)


def turn(args, messages):
    body = {"messages": messages, "max_tokens": args.reply, "temperature": 0, "stream": True,
            "stream_options": {"include_usage": True}}
    if args.model:
        body["model"] = args.model
    start = time.time()
    first = None
    usage = timings = None
    with post(args.url, body) as answer:
        for raw in answer:
            line = raw.decode().strip()
            if not line.startswith("data:") or line == "data: [DONE]":
                continue
            event = json.loads(line[5:])
            choices = event.get("choices") or []
            if first is None and choices and (choices[0].get("delta") or {}).get("content"):
                first = time.time() - start
            usage = event.get("usage") or usage
            timings = event.get("timings") or timings
    prompt = usage["prompt_tokens"] if usage else None
    if timings:  # llama-server: what it evaluated and what it took from its cache
        cached = timings.get("cache_n")
        processed = timings.get("prompt_n")
    else:
        cached = ((usage or {}).get("prompt_tokens_details") or {}).get("cached_tokens")
        processed = prompt - cached if prompt is not None and cached is not None else None
    return {"prompt_tokens": prompt, "cached_tokens": cached, "reprocessed_tokens": processed,
            "ttft_s": round(first if first is not None else time.time() - start, 3)}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--engine", choices=["sinter", "llama-server"], required=True)
    parser.add_argument("--url", required=True)
    parser.add_argument("--model", default="")
    parser.add_argument("--turns", type=int, default=4)
    parser.add_argument("--reply", type=int, default=32)
    parser.add_argument("--system-words", type=int, default=600)
    parser.add_argument("--round", type=int, default=0, help="changes the text, so rounds share no cache")
    args = parser.parse_args()
    system = f"Round {args.round}. You keep this log:\n" + " ".join(
        WORDS[(i * 7 + args.round) % len(WORDS)] for i in range(args.system_words))
    messages = [{"role": "system", "content": system}, {"role": "user", "content": "Who kept the ledger?"}]
    for k in range(1, args.turns + 1):
        result = turn(args, messages)
        print(json.dumps({"engine": args.engine, "turn": k, **result}), flush=True)
        messages.append({"role": "assistant",
                         "content": f"<think>\nQuestion {k}: look it up in the log.\n</think>\n\nAnswer {k}."})
        messages.append({"role": "user", "content": f"And what came in boat {k + 1}?"})


if __name__ == "__main__":
    main()
