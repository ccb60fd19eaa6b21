"""The launcher's one error: a stack that cannot start or died starting,
with the logs of its processes."""


class StackError(Exception):
    def __init__(self, msg, logs=None):
        super().__init__(msg)
        self.logs = logs or {}
