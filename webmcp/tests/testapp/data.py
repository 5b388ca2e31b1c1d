"""Three items in memory: the package's tests need no models."""

ITEMS = {
    "itm-green": {"id": "itm-green", "name": "Green tea", "kind": "tea", "reserved": False},
    "itm-black": {"id": "itm-black", "name": "Black tea", "kind": "tea", "reserved": False},
    "itm-scone": {"id": "itm-scone", "name": "Scone", "kind": "cake", "reserved": False},
}


def search(query: str = "", kind: str = "") -> list[dict]:
    return [
        item
        for item in ITEMS.values()
        if query.lower() in item["name"].lower() and (not kind or item["kind"] == kind)
    ]
