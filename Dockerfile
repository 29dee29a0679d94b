# The oncall-memory image: the CLI, the scheduled ingest and the enrichment service.
# Production embeds through an OpenAI-compatible API (ONCALL_MEMORY_EMBEDDER=openai), so the image
# leaves out the `local` extra (torch); build with --build-arg EXTRAS=local to include it.
FROM python:3.11-slim
ARG EXTRAS=""
WORKDIR /app
COPY pyproject.toml README.md ./
COPY oncall_memory ./oncall_memory
COPY flows ./flows
RUN pip install --no-cache-dir ".${EXTRAS:+[$EXTRAS]}"
# Compile the secret catalogue's rules once into the image (Kingfisher's rule cache), not at first request.
ENV KF_RULE_CACHE_DIR=/opt/kingfisher-cache
RUN python -c "from oncall_memory.redact import redact; redact('warm the catalogue')"
ENV ONCALL_MEMORY_DATA_DIR=/data \
    PREFECT_SERVER_ANALYTICS_ENABLED=false \
    DO_NOT_TRACK=1
VOLUME /data
ENTRYPOINT ["oncall-memory"]
CMD ["serve", "--host", "0.0.0.0", "--port", "8080"]
