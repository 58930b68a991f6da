"""notations: the notation commands a Lean library declares, as its import read them (symbol,
constants as written, namespace, scoped/local), so the search index does not read the checkout
again (issue 45 §6, issue 46 §2)

Revision ID: 0015
Revises: 0014
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0015"
down_revision: str | None = "0014"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "notations",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("source_id", sa.Integer(), nullable=False),
        sa.Column("pin_id", sa.Integer(), nullable=False),
        sa.Column("module", sa.String(length=500), nullable=False),
        sa.Column("line", sa.Integer(), nullable=False),
        sa.Column("symbol", sa.Text(), nullable=False),
        sa.Column("constants", sa.JSON(), nullable=False),
        sa.Column("namespace", sa.Text(), nullable=False),
        sa.Column("scoped", sa.Boolean(), nullable=False),
        sa.Column("local", sa.Boolean(), nullable=False),
        sa.ForeignKeyConstraint(["pin_id"], ["pins.id"], name=op.f("fk_notations_pin_id_pins")),
        sa.ForeignKeyConstraint(
            ["source_id"],
            ["sources.id"],
            name=op.f("fk_notations_source_id_sources"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_notations")),
    )
    op.create_index("ix_notations_source_pin", "notations", ["source_id", "pin_id"], unique=False)


def downgrade() -> None:
    op.drop_index("ix_notations_source_pin", table_name="notations")
    op.drop_table("notations")
