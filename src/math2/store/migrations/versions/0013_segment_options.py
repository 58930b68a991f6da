"""a run segment's executor options (Ray: batch size, items per node, Lean actors per node, …),
so `math2 runs resume` drives the run with them again

Revision ID: 0013
Revises: 0012
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0013"
down_revision: str | None = "0012"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("run_segments", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column("options", sa.JSON(), server_default=sa.text("'{}'"), nullable=False)
        )


def downgrade() -> None:
    with op.batch_alter_table("run_segments", schema=None) as batch_op:
        batch_op.drop_column("options")
