"""The summaries ``SummaryWriter`` writes (TensorBoard's protocol buffers, from the
``tensorboard`` package): scalars, histograms with TensorFlow's default buckets, images,
text and hyperparameters, built as PyTorch's writer builds them."""

from __future__ import annotations

import io
from typing import Any

import numpy as np
from tensorboard.compat.proto.summary_pb2 import HistogramProto, Summary, SummaryMetadata
from tensorboard.compat.proto.tensor_pb2 import TensorProto
from tensorboard.compat.proto.tensor_shape_pb2 import TensorShapeProto
from tensorboard.plugins.text.plugin_data_pb2 import TextPluginData


def as_numpy(x: Any) -> np.ndarray:
    """A tensor, Array, NumPy array or number as a NumPy array on the host."""
    if hasattr(x, "detach") and hasattr(x, "_data"):
        x = x.detach().cpu().numpy()
    elif hasattr(x, "__array__") and not isinstance(x, np.ndarray):
        x = np.asarray(x)
    return np.asarray(x)


def scalar(tag: str, value: Any, new_style: bool = False,
           double_precision: bool = False) -> Summary:
    """One number: ``simple_value`` (or, ``new_style``, a tensor for the scalars plugin)."""
    arr = as_numpy(value).squeeze()
    if arr.ndim != 0:
        raise AssertionError(f"Tensor should contain one element (0 dimensions). Was given "
                             f"size: {arr.size} and {arr.ndim} dimensions.")
    v = float(arr)
    if not new_style:
        return Summary(value=[Summary.Value(tag=tag, simple_value=v)])
    proto = TensorProto(double_val=[v], dtype="DT_DOUBLE") if double_precision else \
        TensorProto(float_val=[v], dtype="DT_FLOAT")
    meta = SummaryMetadata(plugin_data=SummaryMetadata.PluginData(plugin_name="scalars"))
    return Summary(value=[Summary.Value(tag=tag, tensor=proto, metadata=meta)])


def tensorflow_bins() -> list[float]:
    """TensorFlow's default histogram buckets: +-1e-12 growing by 10% to 1e20, and 0."""
    v, buckets = 1e-12, []
    while v < 1e20:
        buckets.append(v)
        v *= 1.1
    return [-b for b in reversed(buckets)] + [0] + buckets


def histogram(tag: str, values: Any, bins: Any, max_bins: int | None = None) -> Summary:
    """The histogram of ``values`` with TensorBoard's bucket layout: the right limit of
    each bucket, the empty buckets outside the data's support left out."""
    v = as_numpy(values).astype(float).reshape(-1)
    if v.size == 0:
        raise ValueError("The input has no element.")
    counts, limits = np.histogram(v, bins=bins)
    if max_bins is not None and len(counts) > max_bins:
        step = len(counts) // max_bins
        if len(counts) % step:
            counts = np.pad(counts, (0, step - len(counts) % step))
        counts = counts.reshape(-1, step).sum(axis=-1)
        limits = np.concatenate([limits[:-1:step], limits[-1:]])
    nonzero = np.cumsum(counts > 0)
    start, end = (int(i) for i in np.searchsorted(nonzero, [0, nonzero[-1] - 1], side="right"))
    end += 1
    # TensorBoard reads right limits only: an empty bucket on the left keeps the leftmost.
    counts = counts[start - 1:end] if start > 0 else np.concatenate([[0], counts[:end]])
    limits = limits[start:end + 1]
    if counts.size == 0 or limits.size == 0:
        raise ValueError("The histogram is empty, please file a bug report.")
    proto = HistogramProto(min=v.min(), max=v.max(), num=len(v), sum=v.sum(),
                           sum_squares=v.dot(v), bucket_limit=limits.tolist(),
                           bucket=counts.tolist())
    return Summary(value=[Summary.Value(tag=tag, histo=proto)])


def _grid(images: np.ndarray, ncols: int = 8) -> np.ndarray:
    """N images (N, 1 or 3, H, W) side by side, ``ncols`` a row: (3, H * rows, W * cols)."""
    if images.shape[1] == 1:
        images = np.concatenate([images] * 3, 1)
    if images.ndim != 4 or images.shape[1] != 3:
        raise AssertionError("Input should be a 4D numpy array with 3 channels")
    n, _, h, w = images.shape
    ncols = min(n, ncols)
    nrows = -(-n // ncols)
    canvas = np.zeros((3, h * nrows, w * ncols), images.dtype)
    for i in range(n):
        y, x = divmod(i, ncols)
        canvas[:, y * h:(y + 1) * h, x * w:(x + 1) * w] = images[i]
    return canvas


def to_hwc(arr: np.ndarray, dataformats: str) -> np.ndarray:
    """An image (or a batch, as a grid) laid out as height, width, channels."""
    fmt = dataformats.upper()
    if len(set(fmt)) != len(fmt):
        raise AssertionError(f"You can not use the same dimension shorthand twice. "
                             f"input_format: {dataformats}")
    if arr.ndim != len(fmt):
        raise AssertionError(f"size of input tensor and input format are different. tensor "
                             f"shape: {arr.shape}, input_format: {dataformats}")
    if len(fmt) == 4:
        return _grid(arr.transpose([fmt.find(c) for c in "NCHW"])).transpose(1, 2, 0)
    if len(fmt) == 3:
        hwc = arr.transpose([fmt.find(c) for c in "HWC"])
        return np.concatenate([hwc] * 3, 2) if hwc.shape[2] == 1 else hwc
    return np.stack([arr.transpose([fmt.find(c) for c in "HW"])] * 3, 2)


def image(tag: str, img: Any, dataformats: str, rescale: float = 1) -> Summary:
    """A PNG of the image: floats are taken in [0, 1], uint8 in [0, 255]."""
    from PIL import Image  # noqa: PLC0415 - Pillow comes with tensorboard

    arr = to_hwc(as_numpy(img), dataformats)
    scale = 1 if arr.dtype == np.uint8 else 255
    pixels = (arr.astype(np.float32) * scale).clip(0, 255).astype(np.uint8)
    height, width, channels = pixels.shape
    picture = Image.fromarray(pixels).resize((int(width * rescale), int(height * rescale)),
                                             Image.Resampling.LANCZOS)
    out = io.BytesIO()
    picture.save(out, format="PNG")
    proto = Summary.Image(height=height, width=width, colorspace=channels,
                          encoded_image_string=out.getvalue())
    return Summary(value=[Summary.Value(tag=tag, image=proto)])


def text(tag: str, text_string: str) -> Summary:
    """A string for the text plugin (tag ``{tag}/text_summary``)."""
    meta = SummaryMetadata(plugin_data=SummaryMetadata.PluginData(
        plugin_name="text", content=TextPluginData(version=0).SerializeToString()))
    proto = TensorProto(dtype="DT_STRING", string_val=[text_string.encode("utf_8")],
                        tensor_shape=TensorShapeProto(dim=[TensorShapeProto.Dim(size=1)]))
    return Summary(value=[Summary.Value(tag=tag + "/text_summary", metadata=meta,
                                        tensor=proto)])


def hparams(hparam_dict: dict[str, Any], metric_dict: dict[str, Any],
            hparam_domain_discrete: dict[str, list[Any]] | None = None
            ) -> tuple[Summary, Summary, Summary]:
    """The hparams plugin's experiment, session-start and session-end summaries."""
    from google.protobuf import struct_pb2  # noqa: PLC0415
    from tensorboard.plugins.hparams import metadata  # noqa: PLC0415
    from tensorboard.plugins.hparams.api_pb2 import (  # noqa: PLC0415
        DataType,
        Experiment,
        HParamInfo,
        MetricInfo,
        MetricName,
        Status,
    )
    from tensorboard.plugins.hparams.plugin_data_pb2 import (  # noqa: PLC0415
        HParamsPluginData,
        SessionEndInfo,
        SessionStartInfo,
    )

    if not isinstance(hparam_dict, dict):
        raise TypeError("parameter: hparam_dict should be a dictionary, nothing logged.")
    if not isinstance(metric_dict, dict):
        raise TypeError("parameter: metric_dict should be a dictionary, nothing logged.")
    discrete = hparam_domain_discrete or {}
    if not isinstance(discrete, dict):
        raise TypeError("parameter: hparam_domain_discrete should be a dictionary, nothing "
                        "logged.")
    for k, v in discrete.items():
        if k not in hparam_dict or not isinstance(v, list) or not all(
                isinstance(d, type(hparam_dict[k])) for d in v):
            raise TypeError(f"parameter: hparam_domain_discrete[{k}] should be a list of same "
                            f"type as hparam_dict[{k}].")
    infos = []
    start = SessionStartInfo()
    for k, v in hparam_dict.items():
        if v is None:
            continue
        # (As PyTorch's: a bool is an int first, so it is logged as a number.)
        if isinstance(v, (int, float)):
            field, kind = "number_value", "DATA_TYPE_FLOAT64"
        elif isinstance(v, str):
            field, kind = "string_value", "DATA_TYPE_STRING"
        elif hasattr(v, "detach") and hasattr(v, "_data"):
            v = as_numpy(v).reshape(-1)[0]
            field, kind = "number_value", "DATA_TYPE_FLOAT64"
        else:
            raise ValueError("value should be one of int, float, str, bool, or torch.Tensor")
        setattr(start.hparams[k], field, v)
        domain = struct_pb2.ListValue(values=[struct_pb2.Value(**{field: d})
                                              for d in discrete[k]]) \
            if k in discrete else None
        infos.append(HParamInfo(name=k, type=DataType.Value(kind), domain_discrete=domain))

    def plugin_summary(tag: str, data: HParamsPluginData) -> Summary:
        meta = SummaryMetadata(plugin_data=SummaryMetadata.PluginData(
            plugin_name=metadata.PLUGIN_NAME, content=data.SerializeToString()))
        return Summary(value=[Summary.Value(tag=tag, metadata=meta)])

    version = metadata.PLUGIN_DATA_VERSION
    experiment = Experiment(hparam_infos=infos,
                            metric_infos=[MetricInfo(name=MetricName(tag=k))
                                          for k in metric_dict])
    return (plugin_summary(metadata.EXPERIMENT_TAG,
                           HParamsPluginData(experiment=experiment, version=version)),
            plugin_summary(metadata.SESSION_START_INFO_TAG,
                           HParamsPluginData(session_start_info=start, version=version)),
            plugin_summary(metadata.SESSION_END_INFO_TAG, HParamsPluginData(
                session_end_info=SessionEndInfo(status=Status.Value("STATUS_SUCCESS")),
                version=version)))
