"""Extensions created at module level and bound to the app in ``create_app`` (the rate
limits are each app's own: ``arena.logins.RateLimits``)."""

from flask_login import LoginManager
from flask_smorest import Api
from flask_wtf.csrf import CSRFProtect

api = Api()
login_manager = LoginManager()
csrf = CSRFProtect()
