"""Everything pure: bytes to a frame, the two protocols, statistics, reports, highlighting, item
keys, search, number formatting, errors. No database, no network, no streamlit."""
