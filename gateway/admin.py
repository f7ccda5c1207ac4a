from django.contrib import admin, messages
from django.contrib.auth.admin import UserAdmin as DjangoUserAdmin

from gateway.models import ApiKey, Membership, Organization, User
from gateway.services import api_key_revoke, api_key_update


@admin.register(User)
class UserAdmin(DjangoUserAdmin):
    ordering = ["email"]
    list_display = ["email", "first_name", "last_name", "is_staff", "is_active", "date_joined"]
    search_fields = ["email", "first_name", "last_name"]
    fieldsets = [
        (None, {"fields": ["email", "password"]}),
        ("Personal info", {"fields": ["first_name", "last_name"]}),
        (
            "Permissions",
            {"fields": ["is_active", "is_staff", "is_superuser", "groups", "user_permissions"]},
        ),
        ("Important dates", {"fields": ["last_login", "date_joined"]}),
    ]
    add_fieldsets = [
        (None, {"classes": ["wide"], "fields": ["email", "password1", "password2"]}),
    ]


class MembershipInline(admin.TabularInline):
    model = Membership
    extra = 0
    autocomplete_fields = ["user"]


@admin.register(Organization)
class OrganizationAdmin(admin.ModelAdmin):
    list_display = ["slug", "name", "created_at"]
    search_fields = ["slug", "name"]
    prepopulated_fields = {"slug": ["name"]}
    inlines = [MembershipInline]


@admin.register(ApiKey)
class ApiKeyAdmin(admin.ModelAdmin):
    """Keys are created by their owners (dashboard, create_api_key); the operator may revoke."""

    list_display = [
        "masked",
        "name",
        "mode",
        "user",
        "organization",
        "created_at",
        "last_used_at",
        "revoked_at",
    ]
    list_filter = ["mode", ("revoked_at", admin.EmptyFieldListFilter)]
    search_fields = ["prefix", "last4", "name", "user__email", "organization__slug"]
    readonly_fields = [
        "user",
        "organization",
        "mode",
        "prefix",
        "last4",
        "created_at",
        "last_used_at",
        "revoked_at",
    ]
    fields = ["name", "rate_limit_per_minute", *readonly_fields]
    actions = ["revoke"]

    def has_add_permission(self, request):
        return False

    def save_model(self, request, obj, form, change):
        api_key_update(api_key=obj, name=obj.name, rate_limit_per_minute=obj.rate_limit_per_minute)

    @admin.action(description="Revoke the selected keys")
    def revoke(self, request, queryset):
        for api_key in queryset.filter(revoked_at__isnull=True):
            api_key_revoke(api_key=api_key)
        messages.success(request, "The selected keys are revoked.")
