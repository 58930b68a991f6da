"""Alembic environment: runs on the engine that math2's Store hands over."""

from alembic import context

from math2.store.models import Base

config = context.config
engine = config.attributes.get("engine")
if engine is None:  # plain `alembic` CLI use: read the URL from the ini file
    from sqlalchemy import create_engine

    engine = create_engine(config.get_main_option("sqlalchemy.url"))

with engine.begin() as connection:
    context.configure(
        connection=connection,
        target_metadata=Base.metadata,
        render_as_batch=connection.dialect.name == "sqlite",
        compare_type=True,
    )
    context.run_migrations()
