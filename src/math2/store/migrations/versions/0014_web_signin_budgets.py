"""the web app's sign-in budgets (per address, per name) and the addresses reviewers signed in
from, kept in the store (a restart and every server process share them); secrets generated
once (the session key)

Revision ID: 0014
Revises: 0013
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0014"
down_revision: str | None = "0013"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "web_signin_budgets",
        sa.Column("key", sa.String(length=300), nullable=False),
        sa.Column("tat", sa.Float(), nullable=False),
        sa.PrimaryKeyConstraint("key", name=op.f("pk_web_signin_budgets")),
    )
    op.create_index(op.f("ix_web_signin_budgets_tat"), "web_signin_budgets", ["tat"], unique=False)
    op.create_table(
        "web_known_addresses",
        sa.Column("address", sa.String(length=64), nullable=False),
        sa.Column("username", sa.String(length=200), nullable=False),
        sa.Column("last_at", sa.Float(), nullable=False),
        sa.PrimaryKeyConstraint("address", "username", name=op.f("pk_web_known_addresses")),
    )
    op.create_index(
        op.f("ix_web_known_addresses_last_at"), "web_known_addresses", ["last_at"], unique=False
    )
    op.create_table(
        "web_secrets",
        sa.Column("name", sa.String(length=80), nullable=False),
        sa.Column("value", sa.String(length=200), nullable=False),
        sa.PrimaryKeyConstraint("name", name=op.f("pk_web_secrets")),
    )


def downgrade() -> None:
    op.drop_table("web_secrets")
    op.drop_index(op.f("ix_web_known_addresses_last_at"), table_name="web_known_addresses")
    op.drop_table("web_known_addresses")
    op.drop_index(op.f("ix_web_signin_budgets_tat"), table_name="web_signin_budgets")
    op.drop_table("web_signin_budgets")
