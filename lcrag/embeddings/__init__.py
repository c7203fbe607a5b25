"""Text encoders: MiniLM and other local sentence encoders (:mod:`.encoders`), the int8 ONNX backend
(:mod:`.onnx_backend`) and an embedding endpoint (:mod:`.endpoint`), registered by name."""
