"""The one exception type the command line turns into a one-line message."""


class UserError(Exception):
    """Something the user can fix: the message says what to do. Printed without a traceback."""

    def __init__(self, message: str, exit_code: int = 1) -> None:
        super().__init__(message)
        self.exit_code = exit_code
