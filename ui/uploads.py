"""The Upload page's files as the server holds them: each upload's bytes once, let go once saved.

Streamlit keeps an uploaded file's bytes for the whole session (in its file manager, until the
browser removes the file), and ``st.file_uploader`` returns a deep copy of its value on every run:
a second copy of the file while it is parsed and scored. :func:`uploaded_files` reads the widget's
value from the session state instead (the manager's bytes, shared), and :func:`let_go` drops the
saved files before the Overview opens. On a million-row upload (175 MB) that is two copies fewer at
the server's peak (``tests/bench_upload_browser.py``).
"""

from __future__ import annotations

from collections.abc import Sequence

import streamlit as st
from streamlit.runtime.scriptrunner import get_script_run_ctx
from streamlit.runtime.uploaded_file_manager import UploadedFile


def uploaded_files(label: str, types: Sequence[str], key: str) -> list[UploadedFile]:
    """``st.file_uploader(label, types, accept_multiple_files=True, key=key)``'s files, as the
    session state holds them: the widget's own return value (a deep copy) is dropped at once."""
    st.file_uploader(label, type=list(types), accept_multiple_files=True, key=key)
    return [f for f in st.session_state.get(key) or [] if isinstance(f, UploadedFile)]


def let_go(key: str, files: Sequence[UploadedFile]) -> None:
    """Forget ``files`` (saved: their runs hold the rows) and the uploader ``key``'s value, so their
    bytes are freed now rather than when the session ends. The uploader shows empty next time, as
    it does whenever the page is left."""
    ctx = get_script_run_ctx()
    # Only the in-memory manager (Streamlit's own, the one a server runs) can remove one file.
    remove = getattr(ctx.uploaded_file_mgr, "remove_file", None) if ctx is not None else None
    for upload in files:
        if remove is not None:
            remove(session_id=ctx.session_id, file_id=upload.file_id)
        upload.close()  # its buffer, shared with the manager's bytes
    if key in st.session_state:
        del st.session_state[key]
