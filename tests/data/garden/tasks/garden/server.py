#!/usr/bin/env python3
"""A two-tool garden: an MCP server over stdio (JSON-RPC 2.0, one message per line), standard
library only. garden://state is the end state passk grades."""

import json
import sys

TODAY = "2026-11-02"
PLANTS = {"P1": "fern", "P2": "basil"}
WATERED = {"P1": "2026-11-01", "P2": "2026-10-30"}
TOOLS = [
    {
        "name": "find_plant",
        "description": "Find a plant by name; says when it was last watered.",
        "inputSchema": {
            "type": "object",
            "properties": {"name": {"type": "string", "description": "The plant's name."}},
            "required": ["name"],
        },
    },
    {
        "name": "water_plant",
        "description": "Water a plant today.",
        "inputSchema": {
            "type": "object",
            "properties": {"plant_id": {"type": "string", "description": "As find_plant gives it."}},
            "required": ["plant_id"],
        },
    },
]


def call(name, args):
    if name == "find_plant":
        found = [{"plant_id": k, "name": v, "last_watered": WATERED[k]}
                 for k, v in PLANTS.items() if v in str(args.get("name", "")).lower()]
        return json.dumps(found), False
    if name == "water_plant":
        plant = str(args.get("plant_id", ""))
        if plant not in PLANTS:
            return f"no plant {plant}", True
        WATERED[plant] = TODAY
        return json.dumps({"plant_id": plant, "last_watered": TODAY}), False
    raise ValueError(f"unknown tool {name}")


def handle(method, params):
    if method == "initialize":
        return {"protocolVersion": params.get("protocolVersion", "2025-06-18"),
                "capabilities": {"tools": {}, "resources": {}},
                "serverInfo": {"name": "garden", "version": "1"}}
    if method == "tools/list":
        return {"tools": TOOLS}
    if method == "tools/call":
        text, is_error = call(params.get("name"), params.get("arguments") or {})
        return {"content": [{"type": "text", "text": text}], "isError": is_error}
    if method == "resources/read":
        text = json.dumps({"watered": WATERED}, sort_keys=True)
        return {"contents": [{"uri": "garden://state", "mimeType": "application/json", "text": text}]}
    raise LookupError(method)


for line in sys.stdin:
    msg = json.loads(line) if line.strip() else {}
    if "id" not in msg:
        continue
    reply = {"jsonrpc": "2.0", "id": msg["id"]}
    try:
        reply["result"] = handle(msg.get("method"), msg.get("params") or {})
    except LookupError as e:
        reply["error"] = {"code": -32601, "message": f"method not found: {e}"}
    except ValueError as e:
        reply["error"] = {"code": -32602, "message": str(e)}
    sys.stdout.write(json.dumps(reply) + "\n")
    sys.stdout.flush()
