"""Placeholder until its issue lands."""

import streamlit as st

st.title("judge")
st.info("Coming soon.")
