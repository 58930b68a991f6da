"""the review queue a page at a time: agent texts by (status, id) and (status, kind, id),
bindings by (status, id), so a keyset page reads its rows in order without sorting the queue

Revision ID: 0012
Revises: 0011
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0012"
down_revision: str | None = "0011"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# (old index, its columns) → (new index, its columns): each new one starts with the old one's.
REPLACED = [
    ("agent_texts", "ix_agent_texts_status_kind", ["status", "kind"],
     "ix_agent_texts_status_kind_id", ["status", "kind", "id"]),
    ("bindings", "ix_bindings_status", ["status"], "ix_bindings_status_id", ["status", "id"]),
]  # fmt: skip
ADDED = [("agent_texts", "ix_agent_texts_status_id", ["status", "id"])]


def upgrade() -> None:
    for table, old, _, new, columns in REPLACED:
        op.create_index(new, table, columns, unique=False)
        op.drop_index(old, table_name=table)
    for table, name, columns in ADDED:
        op.create_index(name, table, columns, unique=False)


def downgrade() -> None:
    for table, name, _ in ADDED:
        op.drop_index(name, table_name=table)
    for table, old, old_columns, new, _ in REPLACED:
        op.create_index(old, table, old_columns, unique=False)
        op.drop_index(new, table_name=table)
