"""Drives the official Python client (PyPI `ollama`) against `passk serve-stub`.

Usage: python check.py HOST ROOT   (HOST: http://127.0.0.1:PORT; ROOT: a passk data root)

Every request a real Ollama v0.33 accepts must be accepted, and every request it refuses must raise
the client's ResponseError with Ollama's status and text. Exits 1 on the first mismatch.
"""

import importlib.metadata
import json
import sys

import ollama

host, root = sys.argv[1], sys.argv[2]
c = ollama.Client(host=host)
tools = json.load(open(f"{root}/tasks/store/tools/bare.json"))["tools"]
first = json.load(open(f"{root}/tasks/store/conversations.json"))[0]["customer"][0]
msg = [{"role": "user", "content": first}]
failed = []


def accepted(label, call, check):
    try:
        out = call()
    except Exception as e:  # noqa: BLE001 - any exception is a refusal here
        failed.append(label)
        print(f"FAIL {label}: refused: {type(e).__name__}: {e}")
        return
    if check(out):
        print(f"ok   {label}")
    else:
        failed.append(label)
        print(f"FAIL {label}: unexpected answer: {str(out)[:300]}")


def refused(label, call, status, text):
    try:
        out = call()
        if hasattr(out, "__iter__") and not isinstance(out, (dict, str)):
            out = list(out)
    except ollama.ResponseError as e:
        if e.status_code == status and text in e.error:
            print(f"ok   {label}: {status} {e.error}")
        else:
            failed.append(label)
            print(f"FAIL {label}: got {e.status_code} {e.error!r}, want {status} {text!r}")
        return
    failed.append(label)
    print(f"FAIL {label}: accepted: {str(out)[:300]}")


def roundtrip():
    r = c.chat(model="thinking", messages=msg, tools=tools)
    call = r.message.tool_calls[0].function.name
    history = msg + [r.message, {"role": "tool", "tool_name": call, "content": '{"ok": true}'}]
    return r, c.chat(model="thinking", messages=history, tools=tools)


accepted("list", lambda: [m.model for m in c.list().models],
         lambda names: "oracle:latest" in names and "messy-pythonic:latest" in names)
accepted("show", lambda: c.show("llama3.2").capabilities, lambda caps: "tools" in caps)
accepted("pull", lambda: c.pull("llama3.2").status, lambda s: s == "success")
accepted("pull streamed", lambda: [p.status for p in c.pull("myns/tiny:1b", stream=True)],
         lambda s: s[-1] == "success")
accepted("chat with tools", lambda: c.chat(model="llama3.2", messages=msg, tools=tools),
         lambda r: bool(r.message.tool_calls))
accepted("chat with tools, streamed",
         lambda: list(c.chat(model="llama3.2", messages=msg, tools=tools, stream=True)),
         lambda chunks: any(ch.message.tool_calls for ch in chunks) and chunks[-1].done)
accepted("think", lambda: c.chat(model="thinking", messages=msg, tools=tools, think=True),
         lambda r: bool(r.message.thinking))
accepted("think level", lambda: c.chat(model="thinking", messages=msg, tools=tools, think="low"),
         lambda r: bool(r.message.thinking))
accepted("think, streamed",
         lambda: list(c.chat(model="thinking", messages=msg, tools=tools, stream=True)),
         lambda chunks: bool(chunks[0].message.thinking))
for ka in [600, 1.5, "15m", "-1m"]:
    accepted(f"keep_alive {ka!r}",
             lambda ka=ka: c.chat(model="oracle", messages=msg, tools=tools, keep_alive=ka),
             lambda r: r.done_reason == "stop")
accepted("format json", lambda: c.chat(model="oracle", messages=msg, format="json"),
         lambda r: isinstance(json.loads(r.message.content), (dict, list)))
accepted("format schema",
         lambda: c.chat(model="oracle", messages=msg,
                        format={"type": "object", "properties": {"a": {"type": "string"}}}),
         lambda r: "a" in json.loads(r.message.content))
accepted("num_predict",
         lambda: c.chat(model="oracle", messages=msg, tools=tools, options={"num_predict": 3}),
         lambda r: (r.done_reason, r.eval_count) == ("length", 3))
accepted("ps", lambda: [m.model for m in c.ps().models], lambda names: "oracle:latest" in names)
accepted("a tool round trip with thinking in the history", roundtrip,
         lambda rs: bool(rs[1].message.tool_calls or rs[1].message.content))
accepted("unload", lambda: c.chat(model="oracle", messages=[], keep_alive=0),
         lambda r: r.done_reason == "unload")
accepted("ps after unload", lambda: [m.model for m in c.ps().models],
         lambda names: "oracle:latest" not in names)

refused("keep_alive '600'", lambda: c.chat(model="oracle", messages=msg, keep_alive="600"),
        400, 'time: missing unit in duration "600"')
refused("keep_alive 'forever'", lambda: c.chat(model="oracle", messages=msg, keep_alive="forever"),
        400, 'time: invalid duration "forever"')
refused("think on a model without thinking",
        lambda: c.chat(model="oracle", messages=msg, think=True),
        400, '"oracle" does not support thinking')
refused("think on a model without thinking, streamed",
        lambda: c.chat(model="oracle", messages=msg, think=True, stream=True),
        400, '"oracle" does not support thinking')
refused("tools on a model without tools",
        lambda: c.chat(model="no-tools", messages=msg, tools=tools),
        400, "registry.ollama.ai/library/no-tools:latest does not support tools")
refused("an option of the wrong type",
        lambda: c.chat(model="oracle", messages=msg, options={"temperature": "hot"}),
        500, 'option "temperature" must be of type float32')
refused("a conversation the stub does not know",
        lambda: c.chat(model="oracle", messages=[{"role": "user", "content": "hello?"}]),
        409, "restart `passk serve-stub`")

print(f"PyPI ollama {importlib.metadata.version('ollama')}: {len(failed)} mismatches")
sys.exit(1 if failed else 0)
