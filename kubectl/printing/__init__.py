"""Printers: server Tables laid out like kubectl (table.py), and -o yaml|json|name|jsonpath
(output.py, jsonpath.py)."""
