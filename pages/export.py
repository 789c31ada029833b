"""Placeholder until its issue lands."""

import streamlit as st

st.title("export")
st.info("Coming soon.")
