from django.contrib.auth import views as auth_views
from django.urls import path, re_path, reverse_lazy

from catalog.sdk import DOWNLOADS_PATH
from dashboard import purchases, views
from dashboard.forms import EmailAuthenticationForm
from dashboard.signin import PasswordResetConfirmView, PasswordResetView

app_name = "dashboard"

auth_patterns = [
    path(
        "login",
        auth_views.LoginView.as_view(
            authentication_form=EmailAuthenticationForm, redirect_authenticated_user=True
        ),
        name="login",
    ),
    path("logout", auth_views.LogoutView.as_view(), name="logout"),
    path(
        "password/change",
        auth_views.PasswordChangeView.as_view(
            success_url=reverse_lazy("dashboard:password-change-done")
        ),
        name="password-change",
    ),
    path(
        "password/change/done",
        auth_views.PasswordChangeDoneView.as_view(),
        name="password-change-done",
    ),
    path(
        "password/reset",
        PasswordResetView.as_view(
            success_url=reverse_lazy("dashboard:password-reset-done"),
            subject_template_name="registration/password_reset_subject.txt",
            email_template_name="registration/password_reset_email.txt",
        ),
        name="password-reset",
    ),
    path(
        "password/reset/sent",
        auth_views.PasswordResetDoneView.as_view(),
        name="password-reset-done",
    ),
    path(
        "password/reset/<uidb64>/<token>",
        PasswordResetConfirmView.as_view(
            success_url=reverse_lazy("dashboard:password-reset-complete")
        ),
        name="password-reset-confirm",
    ),
    path(
        "password/reset/complete",
        auth_views.PasswordResetCompleteView.as_view(),
        name="password-reset-complete",
    ),
]

urlpatterns = [
    path("", views.home, name="home"),
    path("signup", views.signup, name="signup"),
    path("signup/sent", views.signup_sent, name="signup-sent"),
    path("signup/confirm/<str:token>", views.signup_confirm, name="signup-confirm"),
    *auth_patterns,
    path("keys", views.keys, name="keys"),
    path("keys/new", views.key_create, name="key-create"),
    path("keys/created", views.key_created, name="key-created"),
    path("keys/<int:key_id>/revoke", views.key_revoke, name="key-revoke"),
    path("balance", views.balance, name="balance"),
    path("balance/add", purchases.credits_add, name="credits-add"),
    path(
        "balance/purchases/<int:purchase_id>", purchases.purchase_receipt, name="purchase-receipt"
    ),
    path("usage", views.usage, name="usage"),
    path("transactions", views.transactions, name="transactions"),
    path("orgs", views.organizations, name="organizations"),
    path("orgs/<slug:slug>", views.organization, name="organization"),
    path("catalog", views.catalog, name="catalog"),
    path("catalog/search", views.catalog_search, name="catalog-search"),
    path("catalog/apis/<slug:slug>", views.catalog_api, name="catalog-api"),
    # The catalog path follows the method as it is, slashes and "{placeholders}" included.
    re_path(
        r"^catalog/apis/(?P<slug>[-\w]+)/(?P<method>[A-Z]+)(?P<path>/.*)$",
        views.catalog_endpoint,
        name="catalog-endpoint",
    ),
    path(f"{DOWNLOADS_PATH.strip('/')}/<str:name>", views.download, name="download"),
    path("favicon.ico", views.favicon, name="favicon"),
]
