#!/usr/bin/env python3
"""The library desk: an MCP server over stdio (JSON-RPC 2.0, one message per line), standard
library only. Five tools act on an in-memory copy of library.json, reset at every start; the
resource library://state is the end state passk grades (loans and holds)."""

import copy
import datetime
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(HERE, "library.json"), encoding="utf-8") as f:
    SEED = json.load(f)
DB = copy.deepcopy(SEED)
STATE_URI = "library://state"


def param(description):
    return {"type": "string", "description": description}


TOOLS = [
    {
        "name": "find_member",
        "description": "Find library members by name, email or card number.",
        "inputSchema": {
            "type": "object",
            "properties": {"query": param("A name, an email address or a card number.")},
            "required": ["query"],
        },
    },
    {
        "name": "search_books",
        "description": "Search the catalogue by title or author; says whether each book is on the shelf.",
        "inputSchema": {
            "type": "object",
            "properties": {"query": param("Part of a title or an author's name.")},
            "required": ["query"],
        },
    },
    {
        "name": "checkout_book",
        "description": "Lend a book that is on the shelf to a member, for the loan period.",
        "inputSchema": {
            "type": "object",
            "properties": {
                "member_id": param("The member's id, as find_member returns it."),
                "book_id": param("The book's id, as search_books returns it."),
            },
            "required": ["member_id", "book_id"],
        },
    },
    {
        "name": "return_book",
        "description": "Check a returned book back in.",
        "inputSchema": {
            "type": "object",
            "properties": {"book_id": param("The book's id.")},
            "required": ["book_id"],
        },
    },
    {
        "name": "place_hold",
        "description": "Place a hold for a member on a book that is out on loan.",
        "inputSchema": {
            "type": "object",
            "properties": {
                "member_id": param("The member's id."),
                "book_id": param("The book's id."),
            },
            "required": ["member_id", "book_id"],
        },
    },
]


class Refusal(Exception):
    """A tool call the desk refuses: sent back as a tool error (isError)."""


def member(member_id):
    for m in DB["members"]:
        if m["member_id"].lower() == member_id.strip().lower():
            return m
    raise Refusal(f"no member with id '{member_id}'")


def book(book_id):
    for b in DB["books"]:
        if b["book_id"].lower() == book_id.strip().lower():
            return b
    raise Refusal(f"no book with id '{book_id}'")


def loans_of(member_id):
    return sorted(b for b, loan in DB["loans"].items() if loan["member"] == member_id)


def find_member(query):
    q = query.strip().lower()
    found = [
        dict(m, loans=[dict(book_id=b, due=DB["loans"][b]["due"]) for b in loans_of(m["member_id"])])
        for m in DB["members"]
        if q and (q in m["name"].lower() or q == m["email"].lower() or q == m["card"])
    ]
    return {"members": found}


def search_books(query):
    q = query.strip().lower()
    found = []
    for b in DB["books"]:
        if q and (q in b["title"].lower() or q in b["author"].lower()):
            loan = DB["loans"].get(b["book_id"])
            entry = dict(b, on_shelf=loan is None)
            if loan:
                entry["due_back"] = loan["due"]
            found.append(entry)
    return {"books": found}


def checkout_book(member_id, book_id):
    m, b = member(member_id), book(book_id)
    if b["book_id"] in DB["loans"]:
        raise Refusal(f"{b['title']} is on loan until {DB['loans'][b['book_id']]['due']}; place a hold instead")
    if m["fines"] != "0.00":
        raise Refusal(f"{m['name']} has unpaid fines of {m['fines']}; no loans until they are paid")
    if len(loans_of(m["member_id"])) >= DB["max_loans"]:
        raise Refusal(f"{m['name']} already has {DB['max_loans']} books out, the limit")
    today = datetime.date.fromisoformat(DB["today"])
    due = (today + datetime.timedelta(days=DB["loan_days"])).isoformat()
    DB["loans"][b["book_id"]] = {"member": m["member_id"], "due": due}
    return {"checked_out": b["book_id"], "member_id": m["member_id"], "due": due}


def return_book(book_id):
    b = book(book_id)
    if b["book_id"] not in DB["loans"]:
        raise Refusal(f"{b['title']} is not on loan")
    del DB["loans"][b["book_id"]]
    return {"returned": b["book_id"]}


def place_hold(member_id, book_id):
    m, b = member(member_id), book(book_id)
    if b["book_id"] not in DB["loans"]:
        raise Refusal(f"{b['title']} is on the shelf; check it out instead")
    holds = DB["holds"].setdefault(b["book_id"], [])
    if m["member_id"] in holds:
        raise Refusal(f"{m['name']} already holds {b['title']}")
    holds.append(m["member_id"])
    return {"held": b["book_id"], "member_id": m["member_id"], "queue_position": len(holds)}


HANDLERS = {
    "find_member": find_member,
    "search_books": search_books,
    "checkout_book": checkout_book,
    "return_book": return_book,
    "place_hold": place_hold,
}


def state():
    return {"loans": DB["loans"], "holds": DB["holds"]}


def call_tool(params):
    name = params.get("name")
    args = params.get("arguments") or {}
    tool = next((t for t in TOOLS if t["name"] == name), None)
    if tool is None:
        raise ValueError(f"unknown tool '{name}'")
    for p in tool["inputSchema"]["required"]:
        value = args.get(p)
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            value = str(value)
        if not isinstance(value, str) or not value.strip():
            return text_result(f"argument '{p}' must be a non-empty string", True)
        args[p] = value
    try:
        result = HANDLERS[name](**{p: args[p] for p in tool["inputSchema"]["required"]})
    except Refusal as e:
        return text_result(str(e), True)
    return text_result(json.dumps(result), False)


def text_result(text, is_error):
    return {"content": [{"type": "text", "text": text}], "isError": is_error}


def handle(method, params):
    if method == "initialize":
        return {
            "protocolVersion": params.get("protocolVersion", "2025-06-18"),
            "capabilities": {"tools": {}, "resources": {}},
            "serverInfo": {"name": "library-desk", "version": "1.0"},
        }
    if method == "tools/list":
        return {"tools": TOOLS}
    if method == "tools/call":
        return call_tool(params)
    if method == "resources/list":
        return {"resources": [{"uri": STATE_URI, "name": "state", "mimeType": "application/json"}]}
    if method == "resources/read":
        if params.get("uri") != STATE_URI:
            raise ValueError(f"unknown resource {params.get('uri')}")
        text = json.dumps(state(), sort_keys=True)
        return {"contents": [{"uri": STATE_URI, "mimeType": "application/json", "text": text}]}
    raise LookupError(method)


def main():
    for line in sys.stdin:
        if not line.strip():
            continue
        msg = json.loads(line)
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


if __name__ == "__main__":
    main()
