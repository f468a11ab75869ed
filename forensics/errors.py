"""User-facing errors: printed as one line, exit 2, never a traceback."""


class ForensicsError(Exception):
    """An error the user can act on; its message is the whole story."""


class InputError(ForensicsError):
    pass


class SignatureError(ForensicsError):
    pass


class ModelError(ForensicsError):
    pass


class CommandError(ForensicsError):
    """``forensics run``: the command could not be started. Its exit status
    is the shell's (127 not found, 126 not executable), as supervisors give."""

    def __init__(self, message: str, exit_code: int) -> None:
        super().__init__(message)
        self.exit_code = exit_code
