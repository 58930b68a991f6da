"""initial schema

Revision ID: 0001
Revises:
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0001"
down_revision: str | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "models",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("revision", sa.String(length=200), nullable=False),
        sa.Column("provider", sa.String(length=200), nullable=True),
        sa.Column("terms", sa.Text(), nullable=True),
        sa.Column("notes", sa.Text(), nullable=True),
        sa.Column(
            "created_at",
            sa.DateTime(timezone=True),
            server_default=sa.text("(CURRENT_TIMESTAMP)"),
            nullable=False,
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_models")),
        sa.UniqueConstraint("name", "revision", name="uq_models_name_revision"),
    )
    op.create_table(
        "nodes",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("key", sa.String(length=200), nullable=False),
        sa.Column("wikidata", sa.String(length=20), nullable=True),
        sa.Column("title", sa.Text(), nullable=True),
        sa.Column("msc", sa.String(length=200), nullable=True),
        sa.Column("level", sa.String(length=4), nullable=False),
        sa.Column("selected_by", sa.String(length=80), nullable=True),
        sa.Column("extra", sa.JSON(), nullable=False),
        sa.Column(
            "created_at",
            sa.DateTime(timezone=True),
            server_default=sa.text("(CURRENT_TIMESTAMP)"),
            nullable=False,
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_nodes")),
        sa.UniqueConstraint("key", name=op.f("uq_nodes_key")),
    )
    with op.batch_alter_table("nodes", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_nodes_wikidata"), ["wikidata"], unique=False)

    op.create_table(
        "reviews",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("target_table", sa.String(length=40), nullable=False),
        sa.Column("target_id", sa.Integer(), nullable=False),
        sa.Column("reviewer", sa.String(length=200), nullable=False),
        sa.Column("verdict", sa.String(length=20), nullable=False),
        sa.Column("note", sa.Text(), nullable=True),
        sa.Column(
            "created_at",
            sa.DateTime(timezone=True),
            server_default=sa.text("(CURRENT_TIMESTAMP)"),
            nullable=False,
        ),
        sa.CheckConstraint(
            "verdict IN ('confirmed', 'rejected', 'needs_work')", name=op.f("ck_reviews_verdict")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_reviews")),
    )
    with op.batch_alter_table("reviews", schema=None) as batch_op:
        batch_op.create_index("ix_reviews_target", ["target_table", "target_id"], unique=False)

    op.create_table(
        "runs",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("job", sa.String(length=80), nullable=False),
        sa.Column("key", sa.String(length=200), nullable=False),
        sa.Column("status", sa.String(length=20), nullable=False),
        sa.Column("params", sa.JSON(), nullable=False),
        sa.Column("stats", sa.JSON(), nullable=False),
        sa.Column("finished_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column(
            "created_at",
            sa.DateTime(timezone=True),
            server_default=sa.text("(CURRENT_TIMESTAMP)"),
            nullable=False,
        ),
        sa.CheckConstraint("status IN ('running', 'done', 'failed')", name=op.f("ck_runs_status")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_runs")),
        sa.UniqueConstraint("job", "key", name="uq_runs_job_key"),
    )
    op.create_table(
        "sources",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(length=80), nullable=False),
        sa.Column("title", sa.Text(), nullable=False),
        sa.Column("system", sa.String(length=40), nullable=False),
        sa.Column("kind", sa.String(length=40), nullable=False),
        sa.Column("licence", sa.String(length=200), nullable=False),
        sa.Column("per_item_licence", sa.Boolean(), nullable=False),
        sa.Column("authored", sa.String(length=10), nullable=False),
        sa.Column("authored_reason", sa.Text(), nullable=False),
        sa.Column("route", sa.Text(), nullable=False),
        sa.Column("intake_class", sa.String(length=40), nullable=False),
        sa.Column("bindings", sa.Boolean(), nullable=False),
        sa.Column("decided_by", sa.Text(), nullable=False),
        sa.Column("manifest_digest", sa.String(length=64), nullable=False),
        sa.Column(
            "created_at",
            sa.DateTime(timezone=True),
            server_default=sa.text("(CURRENT_TIMESTAMP)"),
            nullable=False,
        ),
        sa.CheckConstraint(
            "authored IN ('human', 'ai', 'mixed')", name=op.f("ck_sources_authored")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_sources")),
        sa.UniqueConstraint("name", name=op.f("uq_sources_name")),
    )
    op.create_table(
        "pins",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("source_id", sa.Integer(), nullable=False),
        sa.Column("key", sa.String(length=200), nullable=False),
        sa.Column("commit", sa.String(length=64), nullable=True),
        sa.Column("version", sa.String(length=200), nullable=True),
        sa.Column("toolchain", sa.String(length=200), nullable=True),
        sa.Column("licence", sa.String(length=200), nullable=False),
        sa.Column("intake_class", sa.String(length=40), nullable=False),
        sa.Column("bindings", sa.Boolean(), nullable=False),
        sa.Column("decided_by", sa.Text(), nullable=False),
        sa.Column("is_current", sa.Boolean(), nullable=False),
        sa.Column(
            "created_at",
            sa.DateTime(timezone=True),
            server_default=sa.text("(CURRENT_TIMESTAMP)"),
            nullable=False,
        ),
        sa.ForeignKeyConstraint(
            ["source_id"],
            ["sources.id"],
            name=op.f("fk_pins_source_id_sources"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_pins")),
        sa.UniqueConstraint("source_id", "key", name="uq_pins_source_key"),
    )
    op.create_table(
        "run_items",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("run_id", sa.Integer(), nullable=False),
        sa.Column("item", sa.String(length=500), nullable=False),
        sa.Column("result", sa.JSON(), nullable=False),
        sa.Column(
            "finished_at",
            sa.DateTime(timezone=True),
            server_default=sa.text("(CURRENT_TIMESTAMP)"),
            nullable=False,
        ),
        sa.ForeignKeyConstraint(
            ["run_id"], ["runs.id"], name=op.f("fk_run_items_run_id_runs"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_run_items")),
        sa.UniqueConstraint("run_id", "item", name="uq_run_items_run_item"),
    )
    op.create_table(
        "mentions",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("source_id", sa.Integer(), nullable=False),
        sa.Column("pin_id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(length=1000), nullable=False),
        sa.Column("kind", sa.String(length=40), nullable=True),
        sa.Column("module", sa.String(length=500), nullable=True),
        sa.Column("statement", sa.Text(), nullable=True),
        sa.Column("docstring", sa.Text(), nullable=True),
        sa.Column("allow_completion", sa.Boolean(), nullable=False),
        sa.Column("type_hash", sa.String(length=64), nullable=True),
        sa.Column("licence", sa.String(length=200), nullable=False),
        sa.Column("intake_class", sa.String(length=40), nullable=False),
        sa.Column("authored", sa.String(length=10), nullable=False),
        sa.Column("status", sa.String(length=10), nullable=False),
        sa.Column("retired_pin_id", sa.Integer(), nullable=True),
        sa.Column("successor", sa.String(length=1000), nullable=True),
        sa.Column("node_id", sa.Integer(), nullable=True),
        sa.Column("outcome", sa.String(length=20), nullable=False),
        sa.Column("extra", sa.JSON(), nullable=False),
        sa.Column(
            "created_at",
            sa.DateTime(timezone=True),
            server_default=sa.text("(CURRENT_TIMESTAMP)"),
            nullable=False,
        ),
        sa.CheckConstraint(
            "authored IN ('human', 'ai', 'mixed')", name=op.f("ck_mentions_authored")
        ),
        sa.CheckConstraint("status IN ('active', 'retired')", name=op.f("ck_mentions_status")),
        sa.ForeignKeyConstraint(
            ["node_id"], ["nodes.id"], name=op.f("fk_mentions_node_id_nodes"), ondelete="SET NULL"
        ),
        sa.ForeignKeyConstraint(["pin_id"], ["pins.id"], name=op.f("fk_mentions_pin_id_pins")),
        sa.ForeignKeyConstraint(
            ["retired_pin_id"], ["pins.id"], name=op.f("fk_mentions_retired_pin_id_pins")
        ),
        sa.ForeignKeyConstraint(
            ["source_id"],
            ["sources.id"],
            name=op.f("fk_mentions_source_id_sources"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_mentions")),
    )
    with op.batch_alter_table("mentions", schema=None) as batch_op:
        batch_op.create_index("ix_mentions_source_name", ["source_id", "name"], unique=False)
        batch_op.create_index(batch_op.f("ix_mentions_type_hash"), ["type_hash"], unique=False)

    op.create_table(
        "bindings",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("node_id", sa.Integer(), nullable=False),
        sa.Column("mention_id", sa.Integer(), nullable=False),
        sa.Column("status", sa.String(length=20), nullable=False),
        sa.Column("review_id", sa.Integer(), nullable=True),
        sa.Column(
            "created_at",
            sa.DateTime(timezone=True),
            server_default=sa.text("(CURRENT_TIMESTAMP)"),
            nullable=False,
        ),
        sa.CheckConstraint(
            "status IN ('proposed', 'confirmed', 'rejected')", name=op.f("ck_bindings_status")
        ),
        sa.ForeignKeyConstraint(
            ["mention_id"], ["mentions.id"], name=op.f("fk_bindings_mention_id_mentions")
        ),
        sa.ForeignKeyConstraint(
            ["node_id"], ["nodes.id"], name=op.f("fk_bindings_node_id_nodes"), ondelete="CASCADE"
        ),
        sa.ForeignKeyConstraint(
            ["review_id"], ["reviews.id"], name=op.f("fk_bindings_review_id_reviews")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_bindings")),
        sa.UniqueConstraint("node_id", "mention_id", name="uq_bindings_node_mention"),
    )
    op.create_table(
        "crosswalks",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("node_id", sa.Integer(), nullable=False),
        sa.Column("system", sa.String(length=40), nullable=False),
        sa.Column("target", sa.String(length=1000), nullable=False),
        sa.Column("mention_id", sa.Integer(), nullable=True),
        sa.Column("relation", sa.String(length=20), nullable=False),
        sa.Column("source_id", sa.Integer(), nullable=False),
        sa.Column("pin_id", sa.Integer(), nullable=True),
        sa.Column("status", sa.String(length=20), nullable=False),
        sa.Column("extra", sa.JSON(), nullable=False),
        sa.Column(
            "created_at",
            sa.DateTime(timezone=True),
            server_default=sa.text("(CURRENT_TIMESTAMP)"),
            nullable=False,
        ),
        sa.CheckConstraint(
            "status IN ('candidate', 'accepted', 'rejected')", name=op.f("ck_crosswalks_status")
        ),
        sa.ForeignKeyConstraint(
            ["mention_id"],
            ["mentions.id"],
            name=op.f("fk_crosswalks_mention_id_mentions"),
            ondelete="SET NULL",
        ),
        sa.ForeignKeyConstraint(
            ["node_id"], ["nodes.id"], name=op.f("fk_crosswalks_node_id_nodes"), ondelete="CASCADE"
        ),
        sa.ForeignKeyConstraint(["pin_id"], ["pins.id"], name=op.f("fk_crosswalks_pin_id_pins")),
        sa.ForeignKeyConstraint(
            ["source_id"], ["sources.id"], name=op.f("fk_crosswalks_source_id_sources")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_crosswalks")),
        sa.UniqueConstraint(
            "node_id", "system", "target", "source_id", name="uq_crosswalks_node_target"
        ),
    )
    op.create_table(
        "texts",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("node_id", sa.Integer(), nullable=True),
        sa.Column("mention_id", sa.Integer(), nullable=True),
        sa.Column("role", sa.String(length=40), nullable=False),
        sa.Column("body", sa.Text(), nullable=False),
        sa.Column("zone", sa.String(length=20), nullable=False),
        sa.Column("licence", sa.String(length=200), nullable=False),
        sa.Column("share_alike", sa.Boolean(), nullable=False),
        sa.Column("attribution", sa.Text(), nullable=False),
        sa.Column("author_kind", sa.String(length=10), nullable=False),
        sa.Column("author", sa.Text(), nullable=True),
        sa.Column("model_id", sa.Integer(), nullable=True),
        sa.Column("prompt_hash", sa.String(length=64), nullable=True),
        sa.Column("source_id", sa.Integer(), nullable=True),
        sa.Column("pin_id", sa.Integer(), nullable=True),
        sa.Column(
            "created_at",
            sa.DateTime(timezone=True),
            server_default=sa.text("(CURRENT_TIMESTAMP)"),
            nullable=False,
        ),
        sa.CheckConstraint(
            "author_kind = 'person' OR (model_id IS NOT NULL AND prompt_hash IS NOT NULL)",
            name=op.f("ck_texts_agent_has_model"),
        ),
        sa.CheckConstraint("author_kind IN ('person', 'agent')", name=op.f("ck_texts_author_kind")),
        sa.CheckConstraint(
            "node_id IS NOT NULL OR mention_id IS NOT NULL", name=op.f("ck_texts_has_target")
        ),
        sa.ForeignKeyConstraint(
            ["mention_id"],
            ["mentions.id"],
            name=op.f("fk_texts_mention_id_mentions"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(["model_id"], ["models.id"], name=op.f("fk_texts_model_id_models")),
        sa.ForeignKeyConstraint(
            ["node_id"], ["nodes.id"], name=op.f("fk_texts_node_id_nodes"), ondelete="CASCADE"
        ),
        sa.ForeignKeyConstraint(["pin_id"], ["pins.id"], name=op.f("fk_texts_pin_id_pins")),
        sa.ForeignKeyConstraint(
            ["source_id"], ["sources.id"], name=op.f("fk_texts_source_id_sources")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_texts")),
    )


def downgrade() -> None:
    op.drop_table("texts")
    op.drop_table("crosswalks")
    op.drop_table("bindings")
    with op.batch_alter_table("mentions", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_mentions_type_hash"))
        batch_op.drop_index("ix_mentions_source_name")

    op.drop_table("mentions")
    op.drop_table("run_items")
    op.drop_table("pins")
    op.drop_table("sources")
    op.drop_table("runs")
    with op.batch_alter_table("reviews", schema=None) as batch_op:
        batch_op.drop_index("ix_reviews_target")

    op.drop_table("reviews")
    with op.batch_alter_table("nodes", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_nodes_wikidata"))

    op.drop_table("nodes")
    op.drop_table("models")
