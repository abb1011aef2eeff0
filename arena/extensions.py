"""Extensions created at module level and bound to the app in ``create_app``.

The rate limiter is the exception: Flask-Limiter keeps its storage and switch on the
object itself, so each app makes its own (``arena.logins.rate_limit`` finds it)."""

from flask_login import LoginManager
from flask_smorest import Api
from flask_wtf.csrf import CSRFProtect

api = Api()
login_manager = LoginManager()
csrf = CSRFProtect()
