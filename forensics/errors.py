"""User-facing errors: printed as one line, exit 2, never a traceback."""


class ForensicsError(Exception):
    """An error the user can act on; its message is the whole story."""


class InputError(ForensicsError):
    pass


class SignatureError(ForensicsError):
    pass


class ModelError(ForensicsError):
    pass
