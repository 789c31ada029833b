"""Placeholder until its issue lands."""

import streamlit as st

st.title("reviewers")
st.info("Coming soon.")
