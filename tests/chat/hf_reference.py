#!/usr/bin/python3
"""Renders chat templates the way Hugging Face transformers does, as the reference for sinter.

Uses Debian's python3-jinja2 (run it with /usr/bin/python3) configured like
transformers.utils.chat_template_utils: an ImmutableSandboxedEnvironment with trim_blocks and
lstrip_blocks, the loopcontrols extension and the {% generation %} tag, a tojson filter that calls
json.dumps(ensure_ascii=False, indent, separators, sort_keys), and the globals raise_exception
and strftime_now. No other Python packages are needed.

Usage: hf_reference.py CASES.json  (prints a JSON list of results, one per case)

Each case is {"template": "...", ...} plus either
  "variables": {...}                      the template's variables as given, or
  "chat": {"messages": [...], "tools": [...] or null, "documents": ... or null,
           "add_generation_prompt": bool, "bos_token": "...", "eos_token": "...",
           "extra": {...}}               the arguments of apply_chat_template: rendered with
                                          messages, tools, documents and add_generation_prompt
                                          always defined, as transformers passes them;
and optionally "now": seconds since the epoch for strftime_now (default: the current time).
A result is {"ok": true, "text": "..."} or {"ok": false, "error": "ExceptionType: message"}.
"""
import datetime
import json
import sys

import jinja2
from jinja2 import nodes
from jinja2.ext import Extension
from jinja2.sandbox import ImmutableSandboxedEnvironment


class GenerationTag(Extension):
    """transformers' AssistantTracker without the tracking: {% generation %} renders its body."""

    tags = {"generation"}

    def parse(self, parser):
        lineno = next(parser.stream).lineno
        body = parser.parse_statements(["name:endgeneration"], drop_needle=True)
        return nodes.CallBlock(self.call_method("_render"), [], [], body).set_lineno(lineno)

    def _render(self, caller):
        return caller()


def make_environment(now):
    def raise_exception(message):
        raise jinja2.exceptions.TemplateError(message)

    def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
        return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)

    def strftime_now(format):
        moment = datetime.datetime.fromtimestamp(now) if now is not None else datetime.datetime.now()
        return moment.strftime(format)

    env = ImmutableSandboxedEnvironment(
        trim_blocks=True, lstrip_blocks=True, extensions=[GenerationTag, jinja2.ext.loopcontrols]
    )
    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    env.globals["strftime_now"] = strftime_now
    return env


def chat_variables(chat):
    variables = {}
    for token in ("bos_token", "eos_token"):
        if chat.get(token) is not None:
            variables[token] = chat[token]
    variables.update(
        messages=chat.get("messages", []),
        tools=chat.get("tools"),
        documents=chat.get("documents"),
        add_generation_prompt=bool(chat.get("add_generation_prompt", False)),
    )
    variables.update(chat.get("extra") or {})
    return variables


def render(case):
    try:
        env = make_environment(case.get("now"))
        template = env.from_string(case["template"])
        variables = chat_variables(case["chat"]) if "chat" in case else case.get("variables", {})
        return {"ok": True, "text": template.render(**variables)}
    except Exception as error:  # every failure is a result: sinter must fail the same way
        return {"ok": False, "error": f"{type(error).__name__}: {error}"}


def main():
    with open(sys.argv[1], encoding="utf-8") as f:
        cases = json.load(f)
    json.dump([render(case) for case in cases], sys.stdout, ensure_ascii=False)


if __name__ == "__main__":
    main()
