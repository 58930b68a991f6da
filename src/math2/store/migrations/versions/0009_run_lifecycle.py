"""run lifecycle: a run's lease (one driver at a time, across processes and machines), the
segments of a run (each time it was driven: executor, spec, how it ended), and the status
`stopped` (a run that stopped early, its items left pending)

Revision ID: 0009
Revises: 0008
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0009"
down_revision: str | None = "0008"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

OLD_STATUS = "status IN ('running', 'done', 'failed')"
NEW_STATUS = "status IN ('running', 'done', 'failed', 'stopped')"
SEGMENT_STATUS = "status IN ('running', 'done', 'stopped', 'failed', 'killed', 'lost')"


def upgrade() -> None:
    op.create_table(
        "run_leases",
        sa.Column("run_id", sa.Integer(), nullable=False),
        sa.Column("holder", sa.String(length=200), nullable=False),
        sa.Column("host", sa.String(length=200), nullable=False),
        sa.Column("pid", sa.Integer(), nullable=False),
        sa.Column("machine", sa.String(length=300), nullable=False),
        sa.Column("segment_id", sa.Integer(), nullable=True),
        sa.Column("acquired_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("heartbeat_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["run_id"], ["runs.id"], name=op.f("fk_run_leases_run_id_runs"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("run_id", name=op.f("pk_run_leases")),
    )
    op.create_table(
        "run_segments",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("run_id", sa.Integer(), nullable=False),
        sa.Column("executor", sa.String(length=20), nullable=False),
        sa.Column("address", sa.String(length=300), nullable=True),
        sa.Column("host", sa.String(length=200), nullable=False),
        sa.Column("pid", sa.Integer(), nullable=False),
        sa.Column("holder", sa.String(length=200), nullable=False),
        sa.Column("status", sa.String(length=20), nullable=False),
        sa.Column("reason", sa.Text(), nullable=True),
        sa.Column("spec_hash", sa.String(length=64), nullable=False),
        sa.Column("spec", sa.JSON(), nullable=False),
        sa.Column("changes", sa.JSON(), nullable=False),
        sa.Column("stats", sa.JSON(), nullable=False),
        sa.Column("started_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("ended_at", sa.DateTime(timezone=True), nullable=True),
        sa.CheckConstraint(SEGMENT_STATUS, name=op.f("ck_run_segments_status")),
        sa.ForeignKeyConstraint(
            ["run_id"], ["runs.id"], name=op.f("fk_run_segments_run_id_runs"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_run_segments")),
    )
    with op.batch_alter_table("run_segments", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_run_segments_run_id"), ["run_id"], unique=False)
    with op.batch_alter_table("runs", schema=None) as batch_op:
        batch_op.drop_constraint(op.f("ck_runs_status"), type_="check")
        batch_op.create_check_constraint(op.f("ck_runs_status"), NEW_STATUS)
    # the run locks of the engine and the importers are the leases now
    op.execute("DELETE FROM locks WHERE name LIKE 'run:%'")


def downgrade() -> None:
    op.execute("UPDATE runs SET status = 'failed' WHERE status = 'stopped'")
    with op.batch_alter_table("runs", schema=None) as batch_op:
        batch_op.drop_constraint(op.f("ck_runs_status"), type_="check")
        batch_op.create_check_constraint(op.f("ck_runs_status"), OLD_STATUS)
    with op.batch_alter_table("run_segments", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_run_segments_run_id"))
    op.drop_table("run_segments")
    op.drop_table("run_leases")
