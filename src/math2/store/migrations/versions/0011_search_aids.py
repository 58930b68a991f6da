"""search_aids: text an AI-written informal dataset gives a Mathlib declaration (K6.4), a search
aid and clustering input only, with the model that wrote it (or `unknown`, X08)

Revision ID: 0011
Revises: 0009
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0011"
down_revision: str | None = "0009"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "search_aids",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("source_id", sa.Integer(), nullable=False),
        sa.Column("pin_id", sa.Integer(), nullable=False),
        sa.Column("mention_id", sa.Integer(), nullable=False),
        sa.Column("kind", sa.String(length=40), nullable=False),
        sa.Column("body", sa.Text(), nullable=False),
        sa.Column("model", sa.String(length=200), nullable=False),
        sa.Column("extra", sa.JSON(), nullable=False),
        sa.Column(
            "created_at",
            sa.DateTime(timezone=True),
            server_default=sa.text("(CURRENT_TIMESTAMP)"),
            nullable=False,
        ),
        sa.ForeignKeyConstraint(
            ["mention_id"],
            ["mentions.id"],
            name=op.f("fk_search_aids_mention_id_mentions"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(["pin_id"], ["pins.id"], name=op.f("fk_search_aids_pin_id_pins")),
        sa.ForeignKeyConstraint(
            ["source_id"],
            ["sources.id"],
            name=op.f("fk_search_aids_source_id_sources"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_search_aids")),
    )
    op.create_index("ix_search_aids_mention_id", "search_aids", ["mention_id"], unique=False)
    op.create_index("ix_search_aids_source_id", "search_aids", ["source_id"], unique=False)


def downgrade() -> None:
    op.drop_index("ix_search_aids_source_id", table_name="search_aids")
    op.drop_index("ix_search_aids_mention_id", table_name="search_aids")
    op.drop_table("search_aids")
