"""const deps

Revision ID: 0003
Revises: 0002
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0003"
down_revision: str | None = "0002"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "const_deps",
        sa.Column("mention_id", sa.Integer(), nullable=False),
        sa.Column("deps", sa.JSON(), nullable=False),
        sa.ForeignKeyConstraint(
            ["mention_id"],
            ["mentions.id"],
            name=op.f("fk_const_deps_mention_id_mentions"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("mention_id", name=op.f("pk_const_deps")),
    )


def downgrade() -> None:
    op.drop_table("const_deps")
