"""Extensions created at module level and bound to the app in ``create_app``."""

from flask_smorest import Api

api = Api()
