"""Errors that carry a message meant for the person who supplied the input."""


class InputError(ValueError):
    """Bad input (file, column, row, byte). The message is shown to the user as is."""
