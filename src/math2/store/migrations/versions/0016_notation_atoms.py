"""notation atoms: every atom of a notation command (not only its main symbol), its command
kind and whether it starts with an atom, so hygiene's token table and the core types are read
from the store (issue 41 §2); commands with no main symbol are kept too (symbol nullable).
Rows stored before this revision have no atoms (NULL): a reader takes them as not recorded.

Revision ID: 0016
Revises: 0015
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0016"
down_revision: str | None = "0015"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("notations") as batch:
        batch.add_column(sa.Column("atoms", sa.JSON(), nullable=True))
        batch.add_column(sa.Column("kind", sa.String(length=20), nullable=True))
        batch.add_column(sa.Column("leading_atom", sa.Boolean(), nullable=True))
        batch.alter_column("symbol", existing_type=sa.Text(), nullable=True)


def downgrade() -> None:
    op.execute("DELETE FROM notations WHERE symbol IS NULL")
    with op.batch_alter_table("notations") as batch:
        batch.alter_column("symbol", existing_type=sa.Text(), nullable=False)
        batch.drop_column("leading_atom")
        batch.drop_column("kind")
        batch.drop_column("atoms")
