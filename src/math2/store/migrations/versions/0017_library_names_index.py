"""the library names index: hygiene's lookups of a name or a namespace among a library's active,
visible mentions (`math2.lean.library.LibraryNames`) hold source, status and allow_completion
equal and the name equal or in a range; with this index every condition is a column of it, so
SQLite takes it even without ANALYZE (where it scanned every mention per name).

Revision ID: 0017
Revises: 0016
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0017"
down_revision: str | None = "0016"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_index(
        "ix_mentions_library_names",
        "mentions",
        ["source_id", "status", "allow_completion", "name"],
    )


def downgrade() -> None:
    op.drop_index("ix_mentions_library_names", table_name="mentions")
