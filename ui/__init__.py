"""Streamlit-side helpers shared by the pages: cached resources, run selection, safe display.

Kept apart from ``scoring/`` (which never imports streamlit) and from the page files (which only
lay out what these helpers and ``scoring`` return).
"""
