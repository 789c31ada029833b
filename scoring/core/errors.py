"""Errors that carry a message meant for the person who supplied the input."""


class InputError(ValueError):
    """Bad input (file, column, row, byte). The message is shown to the user as is."""


class NotSaved(RuntimeError):
    """A reviewer's action could not be written (database busy or unwritable).

    The message is shown as is; nothing was written, so the same action can simply be retried.
    """
