"""web sessions held in the store, and the indexes the web pages read through

Revision ID: 0007
Revises: 0004
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0007"
down_revision: str | None = "0004"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

INDEXES = [
    ("ix_mentions_node_id", "mentions", ["node_id", "source_id"]),
    ("ix_mentions_source_status", "mentions", ["source_id", "status"]),
    ("ix_mentions_pin_id", "mentions", ["pin_id"]),
    ("ix_mentions_retired_pin_id", "mentions", ["retired_pin_id"]),
    ("ix_texts_node_id", "texts", ["node_id"]),
    ("ix_texts_mention_id", "texts", ["mention_id"]),
    ("ix_texts_source_id", "texts", ["source_id"]),
    ("ix_crosswalks_source_id", "crosswalks", ["source_id"]),
    ("ix_agent_texts_node_id", "agent_texts", ["node_id"]),
    ("ix_check_results_agent_text_id", "check_results", ["agent_text_id"]),
]


def upgrade() -> None:
    op.create_table(
        "web_sessions",
        sa.Column("digest", sa.String(length=64), nullable=False),
        sa.Column("reviewer_id", sa.Integer(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["reviewer_id"],
            ["reviewers.id"],
            name=op.f("fk_web_sessions_reviewer_id_reviewers"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("digest", name=op.f("pk_web_sessions")),
    )
    op.create_index(
        op.f("ix_web_sessions_reviewer_id"), "web_sessions", ["reviewer_id"], unique=False
    )
    for name, table, columns in INDEXES:
        op.create_index(name, table, columns, unique=False)


def downgrade() -> None:
    for name, table, _ in reversed(INDEXES):
        op.drop_index(name, table_name=table)
    op.drop_index(op.f("ix_web_sessions_reviewer_id"), table_name="web_sessions")
    op.drop_table("web_sessions")
