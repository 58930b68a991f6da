"""bindings: the lifecycle proposed → checked | check_failed → confirmed | rejected; who proposed
a binding, a model-written statement as its Lean side, and the last Lean check

Revision ID: 0008
Revises: 0007
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0008"
down_revision: str | None = "0007"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

OLD_STATUS = "status IN ('proposed', 'confirmed', 'rejected')"
NEW_STATUS = "status IN ('proposed', 'checked', 'check_failed', 'confirmed', 'rejected')"
ORIGIN = "origin IS NULL OR origin IN ('formalize', 'align', 'crosswalk', 'person')"


def upgrade() -> None:
    with op.batch_alter_table("bindings", schema=None) as batch_op:
        batch_op.drop_constraint(op.f("ck_bindings_status"), type_="check")
        batch_op.create_check_constraint(op.f("ck_bindings_status"), NEW_STATUS)
        batch_op.alter_column("mention_id", existing_type=sa.Integer(), nullable=True)
        batch_op.add_column(sa.Column("origin", sa.String(length=20), nullable=True))
        batch_op.add_column(sa.Column("agent_text_id", sa.Integer(), nullable=True))
        batch_op.add_column(sa.Column("lean_check", sa.JSON(), nullable=True))
        batch_op.create_check_constraint(op.f("ck_bindings_origin"), ORIGIN)
        batch_op.create_foreign_key(
            op.f("fk_bindings_agent_text_id_agent_texts"),
            "agent_texts",
            ["agent_text_id"],
            ["id"],
            ondelete="SET NULL",
        )
        batch_op.create_index("ix_bindings_status", ["status"], unique=False)
    op.execute("UPDATE bindings SET lean_check = '{}' WHERE lean_check IS NULL")
    with op.batch_alter_table("bindings", schema=None) as batch_op:
        batch_op.alter_column("lean_check", existing_type=sa.JSON(), nullable=False)


def downgrade() -> None:
    op.execute(
        "UPDATE bindings SET status = 'proposed' WHERE status IN ('checked', 'check_failed')"
    )
    op.execute("DELETE FROM bindings WHERE mention_id IS NULL")
    with op.batch_alter_table("bindings", schema=None) as batch_op:
        batch_op.drop_index("ix_bindings_status")
        batch_op.drop_constraint(op.f("fk_bindings_agent_text_id_agent_texts"), type_="foreignkey")
        batch_op.drop_constraint(op.f("ck_bindings_origin"), type_="check")
        batch_op.drop_column("lean_check")
        batch_op.drop_column("agent_text_id")
        batch_op.drop_column("origin")
        batch_op.alter_column("mention_id", existing_type=sa.Integer(), nullable=False)
        batch_op.drop_constraint(op.f("ck_bindings_status"), type_="check")
        batch_op.create_check_constraint(op.f("ck_bindings_status"), OLD_STATUS)
