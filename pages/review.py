"""Placeholder until its issue lands."""

import streamlit as st

st.title("review")
st.info("Coming soon.")
