"""``jax.scipy.spatial.transform``: ``Rotation`` (unit quaternions, scalar last, batched
along leading axes) and ``Slerp``. Both are NamedTuples, so pytrees: they pass through
``jit``, ``vmap`` and ``grad``.

>>> from funcgrad.scipy.spatial.transform import Rotation
>>> Rotation.from_euler("z", 90, degrees=True).as_rotvec().round(4)
Array([0.    , 0.    , 1.5708], dtype=float32)
"""

from __future__ import annotations

import functools
import re
import typing
from typing import Any

import numpy as np

import funcgrad.numpy as jnp

__all__ = ["Rotation", "Slerp"]

Array = Any


def _check_seq(seq: str) -> tuple[bool, bool]:
    intrinsic = re.match(r"^[XYZ]{1,3}$", seq) is not None
    extrinsic = re.match(r"^[xyz]{1,3}$", seq) is not None
    return intrinsic, extrinsic


class Rotation(typing.NamedTuple):
    """Rotations in 3 dimensions, as ``jax.scipy.spatial.transform.Rotation`` (a
    quaternion ``quat`` of shape ``(4,)`` for one rotation, ``(N, 4)`` for several).

    >>> r = Rotation.from_euler("z", 90, degrees=True)
    >>> r2 = Rotation.from_euler("x", 90, degrees=True)
    >>> (r * r2).as_matrix().round(4).tolist()
    [[0.0, 0.0, 1.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]
    """

    quat: Array

    @classmethod
    def concatenate(cls, rotations: typing.Sequence[Rotation]) -> Rotation:
        """Concatenate a sequence of ``Rotation`` objects.

        >>> r = Rotation.from_rotvec(jnp.zeros((2, 3)))
        >>> len(Rotation.concatenate([r, r]))
        4
        """
        return cls(jnp.concatenate([rotation.quat for rotation in rotations]))

    @classmethod
    def from_euler(cls, seq: str, angles: Array, degrees: bool = False) -> Rotation:
        """From Euler angles: ``seq`` of up to 3 axes, ``"xyz"`` extrinsic or ``"XYZ"``
        intrinsic.

        >>> Rotation.from_euler("x", 180, degrees=True).as_quat().round(4)
        Array([ 1.,  0.,  0., -0.], dtype=float32)
        """
        num_axes = len(seq)
        if num_axes < 1 or num_axes > 3:
            raise ValueError("Expected axis specification to be a non-empty string of upto 3 "
                             f"characters, got {seq}")
        intrinsic, extrinsic = _check_seq(seq)
        if not (intrinsic or extrinsic):
            raise ValueError("Expected axes from `seq` to be from ['x', 'y', 'z'] or ['X', "
                             f"'Y', 'Z'], got {seq}")
        if any(seq[i] == seq[i + 1] for i in range(num_axes - 1)):
            raise ValueError(f"Expected consecutive axes to be different, got {seq}")
        angles = jnp.atleast_1d(angles)
        axes = jnp.array([_elementary_basis_index(x) for x in seq.lower()])
        return cls(_elementary_quat_compose(angles, axes, intrinsic, degrees))

    @classmethod
    def from_matrix(cls, matrix: Array) -> Rotation:
        """From rotation matrices ``(..., 3, 3)``.

        >>> Rotation.from_matrix(jnp.eye(3)).as_quat().tolist()
        [0.0, 0.0, 0.0, 1.0]
        """
        return cls(_from_matrix(matrix))

    @classmethod
    def from_mrp(cls, mrp: Array) -> Rotation:
        """From Modified Rodrigues Parameters.

        >>> Rotation.from_mrp(jnp.array([0.0, 0.0, 1.0])).as_quat().tolist()
        [0.0, 0.0, 1.0, 0.0]
        """
        return cls(_from_mrp(mrp))

    @classmethod
    def from_quat(cls, quat: Array) -> Rotation:
        """From quaternions (scalar last), normalized.

        >>> Rotation.from_quat(jnp.array([0.0, 0.0, 0.0, 2.0])).quat.tolist()
        [0.0, 0.0, 0.0, 1.0]
        """
        return cls(_normalize_quaternion(quat))

    @classmethod
    def from_rotvec(cls, rotvec: Array, degrees: bool = False) -> Rotation:
        """From rotation vectors (axis times angle).

        >>> float(Rotation.from_rotvec(jnp.array([0.0, 0.5, 0.0])).magnitude())
        0.5
        """
        return cls(_from_rotvec(rotvec, degrees))

    @classmethod
    def identity(cls, num: int | None = None, dtype: Any = float) -> Rotation:
        """The identity rotation (``num`` must be None, as in JAX).

        >>> Rotation.identity().as_quat().tolist()
        [0.0, 0.0, 0.0, 1.0]
        """
        assert num is None
        return cls(jnp.array([0., 0., 0., 1.], dtype=dtype))

    @classmethod
    def random(cls, random_key: Array, num: int | None = None) -> Rotation:
        """Not available: JAX raises NotImplementedError here too.

        >>> Rotation.random(None)
        Traceback (most recent call last):
        NotImplementedError
        """
        # JAX would need scipy.stats.special_ortho_group for this.
        raise NotImplementedError()

    def __getitem__(self, indexer: Any) -> Rotation:
        """The rotation(s) at ``indexer``; a single rotation is not subscriptable."""
        if self.single:
            raise TypeError("Single rotation is not subscriptable.")
        return Rotation(self.quat[indexer])

    def __len__(self) -> int:
        """The number of rotations; a single rotation has no len()."""
        if self.single:
            raise TypeError("Single rotation has no len().")
        return self.quat.shape[0]

    def __mul__(self, other: Rotation) -> Rotation:  # type: ignore[override]
        """Compose: ``self * other`` applies ``other`` first."""
        return Rotation.from_quat(_compose_quat(self.quat, other.quat))

    def apply(self, vectors: Array, inverse: bool = False) -> Array:
        """Rotate vectors ``(..., 3)`` (by the inverse rotation with ``inverse``).

        >>> r = Rotation.from_euler("z", 90, degrees=True)
        >>> r.apply(jnp.array([1.0, 0.0, 0.0])).round(4).tolist()
        [0.0, 1.0, 0.0]
        """
        return _apply(self.as_matrix(), vectors, inverse)

    def as_euler(self, seq: str, degrees: bool = False) -> Array:
        """As Euler angles for a sequence of exactly 3 axes.

        >>> angles = Rotation.from_euler("zyx", jnp.array([0.1, 0.2, 0.3])).as_euler("zyx")
        >>> [round(a, 4) for a in angles.tolist()]
        [0.1, 0.2, 0.3]
        """
        if len(seq) != 3:
            raise ValueError(f"Expected 3 axes, got {seq}.")
        intrinsic, extrinsic = _check_seq(seq)
        if not (intrinsic or extrinsic):
            raise ValueError("Expected axes from `seq` to be from ['x', 'y', 'z'] or ['X', "
                             f"'Y', 'Z'], got {seq}")
        if any(seq[i] == seq[i + 1] for i in range(2)):
            raise ValueError(f"Expected consecutive axes to be different, got {seq}")
        axes = jnp.array([_elementary_basis_index(x) for x in seq.lower()])
        return _compute_euler_from_quat(self.quat, axes, extrinsic, degrees)

    def as_matrix(self) -> Array:
        """As rotation matrices ``(..., 3, 3)``.

        >>> Rotation.identity().as_matrix().tolist()[0]
        [1.0, 0.0, 0.0]
        """
        return _as_matrix(self.quat)

    def as_mrp(self) -> Array:
        """As Modified Rodrigues Parameters.

        >>> Rotation.identity().as_mrp().tolist()
        [0.0, 0.0, 0.0]
        """
        return _as_mrp(self.quat)

    def as_rotvec(self, degrees: bool = False) -> Array:
        """As rotation vectors (axis times angle, the angle in [0, pi]).

        >>> Rotation.from_euler("y", 90, degrees=True).as_rotvec(degrees=True).round(2)
        Array([ 0., 90.,  0.], dtype=float32)
        """
        return _as_rotvec(self.quat, degrees)

    def as_quat(self, canonical: bool = False, scalar_first: bool = False) -> Array:
        """As quaternions, scalar last (first with ``scalar_first``); ``canonical`` picks
        the one of ``q, -q`` with a positive scalar part.

        >>> Rotation.from_quat(jnp.array([0.0, 0.0, 0.0, -1.0])).as_quat(True).tolist()
        [-0.0, -0.0, -0.0, 1.0]
        """
        quat = _make_canonical(self.quat) if canonical else self.quat
        if scalar_first:
            return jnp.roll(quat, shift=1, axis=-1)
        return quat

    def inv(self) -> Rotation:
        """The inverse rotation.

        >>> Rotation.from_rotvec(jnp.array([0.0, 0.0, 0.5])).inv().as_rotvec().tolist()
        [-0.0, -0.0, -0.5]
        """
        return Rotation(_inv(self.quat))

    def magnitude(self) -> Array:
        """The rotation angle(s), in radians.

        >>> float(Rotation.from_rotvec(jnp.array([0.0, 0.0, 0.5])).magnitude())
        0.5
        """
        return _magnitude(self.quat)

    def mean(self, weights: Array | None = None) -> Rotation:
        """The (weighted) mean rotation, by the largest eigenvector of sum w q q^T.

        >>> r = Rotation.from_rotvec(jnp.array([[0.0, 0.0, 0.2], [0.0, 0.0, 0.4]]))
        >>> round(float(r.mean().magnitude()), 4)
        0.3
        """
        w = (jnp.ones(self.quat.shape[0], dtype=self.quat.dtype) if weights is None
             else jnp.asarray(weights, dtype=self.quat.dtype))
        if w.ndim != 1:
            raise ValueError(f"Expected `weights` to be 1 dimensional, got shape {w.shape}.")
        if w.shape[0] != len(self):
            raise ValueError("Expected `weights` to have number of values equal to number of "
                             f"rotations, got {w.shape[0]} values and {len(self)} rotations.")
        K = jnp.dot(w[np.newaxis, :] * self.quat.T, self.quat)  # noqa: N806
        _, v = jnp.linalg.eigh(K)
        return Rotation(v[:, -1])

    @property
    def single(self) -> bool:
        """Whether this holds one rotation (``quat`` is 1-D)."""
        return self.quat.ndim == 1


class Slerp(typing.NamedTuple):
    """Spherical linear interpolation of rotations, as
    ``jax.scipy.spatial.transform.Slerp``: build with ``Slerp.init(times, rotations)``.

    >>> r = Rotation.from_euler("z", jnp.array([[0.0], [90.0]]), degrees=True)
    >>> slerp = Slerp.init(jnp.array([0.0, 1.0]), r)
    >>> [round(a, 3) for a in slerp(0.5).as_euler("zyx", degrees=True).tolist()]
    [45.0, -0.0, 0.0]
    """

    times: Array
    timedelta: Array
    rotations: Rotation
    rotvecs: Array

    @classmethod
    def init(cls, times: Array, rotations: Rotation) -> Slerp:
        """The interpolator through ``rotations`` at increasing ``times``.

        >>> r = Rotation.from_rotvec(jnp.array([[0.0, 0.0, 0.0], [0.0, 0.0, 1.0]]))
        >>> Slerp.init(jnp.array([0.0, 2.0]), r).timedelta.tolist()
        [2.0]
        """
        if not isinstance(rotations, Rotation):
            raise TypeError("`rotations` must be a `Rotation` instance.")
        if rotations.single or len(rotations) == 1:
            raise ValueError("`rotations` must be a sequence of at least 2 rotations.")
        times = jnp.asarray(times, dtype=rotations.quat.dtype)
        if times.ndim != 1:
            raise ValueError("Expected times to be specified in a 1 dimensional array, got "
                             f"{times.ndim} dimensions.")
        if times.shape[0] != len(rotations):
            raise ValueError("Expected number of rotations to be equal to number of "
                             f"timestamps given, got {len(rotations)} rotations and "
                             f"{times.shape[0]} timestamps.")
        # Increasing times are not checked: that would need concrete values (as JAX).
        timedelta = jnp.diff(times)
        new_rotations = Rotation(rotations.as_quat()[:-1])
        return cls(times=times, timedelta=timedelta, rotations=new_rotations,
                   rotvecs=(new_rotations.inv()
                            * Rotation(rotations.as_quat()[1:])).as_rotvec())

    def __call__(self, times: Array) -> Rotation:
        """The interpolated rotation(s) at ``times`` (a scalar gives a single rotation).

        >>> r = Rotation.from_rotvec(jnp.array([[0.0, 0.0, 0.0], [0.0, 0.0, 1.0]]))
        >>> float(Slerp.init(jnp.array([0.0, 1.0]), r)(0.25).magnitude())
        0.25
        """
        compute_times = jnp.asarray(times, dtype=self.times.dtype)
        if compute_times.ndim > 1:
            raise ValueError("`times` must be at most 1-dimensional.")
        single_time = compute_times.ndim == 0
        compute_times = jnp.atleast_1d(compute_times)
        ind = jnp.maximum(jnp.searchsorted(self.times, compute_times) - 1, 0)
        alpha = (compute_times - self.times[ind]) / self.timedelta[ind]
        result = (self.rotations[ind]
                  * Rotation.from_rotvec(self.rotvecs[ind] * alpha[:, None]))
        if single_time:
            return result[0]
        return result


@functools.partial(jnp.vectorize, signature="(m,m),(m),()->(m)")
def _apply(matrix: Array, vector: Array, inverse: Any) -> Array:
    return jnp.where(inverse, matrix.T, matrix) @ vector


@functools.partial(jnp.vectorize, signature="(m)->(n,n)")
def _as_matrix(quat: Array) -> Array:
    x, y, z, w = quat[0], quat[1], quat[2], quat[3]
    x2, y2, z2, w2 = x * x, y * y, z * z, w * w
    xy, zw, xz, yw, yz, xw = x * y, z * w, x * z, y * w, y * z, x * w
    return jnp.array([[+ x2 - y2 - z2 + w2, 2 * (xy - zw), 2 * (xz + yw)],
                      [2 * (xy + zw), - x2 + y2 - z2 + w2, 2 * (yz - xw)],
                      [2 * (xz - yw), 2 * (yz + xw), - x2 - y2 + z2 + w2]])


@functools.partial(jnp.vectorize, signature="(m)->(n)")
def _as_mrp(quat: Array) -> Array:
    sign = jnp.where(quat[3] < 0, -1., 1.)
    denominator = 1. + sign * quat[3]
    return sign * quat[:3] / denominator


@functools.partial(jnp.vectorize, signature="(m),()->(n)")
def _as_rotvec(quat: Array, degrees: Any) -> Array:
    quat = jnp.where(quat[3] < 0, -quat, quat)  # w >= 0 keeps the angle in [0, pi]
    angle = 2. * jnp.arctan2(_vector_norm(quat[:3]), quat[3])
    angle2 = angle * angle
    small_scale = 2 + angle2 / 12 + 7 * angle2 * angle2 / 2880
    large_scale = angle / jnp.sin(angle / 2)
    scale = jnp.where(angle <= 1e-3, small_scale, large_scale)
    scale = jnp.where(degrees, jnp.rad2deg(scale), scale)
    return scale * jnp.array(quat[:3])


@functools.partial(jnp.vectorize, signature="(n),(n)->(n)")
def _compose_quat(p: Array, q: Array) -> Array:
    cross = jnp.cross(p[:3], q[:3])
    return jnp.array([p[3] * q[0] + q[3] * p[0] + cross[0],
                      p[3] * q[1] + q[3] * p[1] + cross[1],
                      p[3] * q[2] + q[3] * p[2] + cross[2],
                      p[3] * q[3] - p[0] * q[0] - p[1] * q[1] - p[2] * q[2]])


@functools.partial(jnp.vectorize, signature="(m),(l),(),()->(n)")
def _compute_euler_from_quat(quat: Array, axes: Array, extrinsic: Any, degrees: Any) -> Array:
    angle_first = jnp.where(extrinsic, 0, 2)
    angle_third = jnp.where(extrinsic, 2, 0)
    axes = jnp.where(extrinsic, axes, axes[::-1])
    i, j, k = axes[0], axes[1], axes[2]
    symmetric = i == k
    k = jnp.where(symmetric, 3 - i - j, k)
    sign = jnp.array((i - j) * (j - k) * (k - i) // 2, dtype=quat.dtype)
    eps = 1e-7
    a = jnp.where(symmetric, quat[3], quat[3] - quat[j])
    b = jnp.where(symmetric, quat[i], quat[i] + quat[k] * sign)
    c = jnp.where(symmetric, quat[j], quat[j] + quat[3])
    d = jnp.where(symmetric, quat[k] * sign, quat[k] * sign - quat[i])
    angles = jnp.empty(3, dtype=quat.dtype)
    angles = angles.at[1].set(2 * jnp.arctan2(jnp.hypot(c, d), jnp.hypot(a, b)))
    case = jnp.where(jnp.abs(angles[1] - np.pi) <= eps, 2, 0)
    case = jnp.where(jnp.abs(angles[1]) <= eps, 1, case)
    half_sum = jnp.arctan2(b, a)
    half_diff = jnp.arctan2(d, c)
    # The degenerate cases (case 1 or 2) put the whole angle in the first slot.
    angles = angles.at[0].set(jnp.where(case == 1, 2 * half_sum,
                                        2 * half_diff * jnp.where(extrinsic, -1, 1)))
    angles = angles.at[angle_first].set(jnp.where(case == 0, half_sum - half_diff,
                                                  angles[angle_first]))
    angles = angles.at[angle_third].set(jnp.where(case == 0, half_sum + half_diff,
                                                  angles[angle_third]))
    angles = angles.at[angle_third].set(jnp.where(symmetric, angles[angle_third],
                                                  angles[angle_third] * sign))
    angles = angles.at[1].set(jnp.where(symmetric, angles[1], angles[1] - np.pi / 2))
    angles = (angles + np.pi) % (2 * np.pi) - np.pi
    return jnp.where(degrees, jnp.rad2deg(angles), angles)


def _elementary_basis_index(axis: str) -> int:
    if axis in "xyz" and len(axis) == 1:
        return "xyz".index(axis)
    raise ValueError(f"Expected axis to be from ['x', 'y', 'z'], got {axis}")


@functools.partial(jnp.vectorize, signature="(m),(m),(),()->(n)")
def _elementary_quat_compose(angles: Array, axes: Array, intrinsic: Any,
                             degrees: Any) -> Array:
    angles = jnp.where(degrees, jnp.deg2rad(angles), angles)
    result = _make_elementary_quat(axes[0], angles[0])
    for idx in range(1, len(axes)):
        quat = _make_elementary_quat(axes[idx], angles[idx])
        result = jnp.where(intrinsic, _compose_quat(result, quat), _compose_quat(quat, result))
    return result


@functools.partial(jnp.vectorize, signature="(m),()->(n)")
def _from_rotvec(rotvec: Array, degrees: Any) -> Array:
    rotvec = jnp.where(degrees, jnp.deg2rad(rotvec), rotvec)
    angle = _vector_norm(rotvec)
    angle2 = angle * angle
    small_scale = 0.5 - angle2 / 48 + angle2 * angle2 / 3840
    large_scale = jnp.sin(angle / 2) / angle
    scale = jnp.where(angle <= 1e-3, small_scale, large_scale)
    return jnp.hstack([scale * rotvec, jnp.cos(angle / 2)])


@functools.partial(jnp.vectorize, signature="(m,m)->(n)")
def _from_matrix(matrix: Array) -> Array:
    # Shepperd's method: build from the largest of the diagonal and the trace.
    matrix_trace = matrix[0, 0] + matrix[1, 1] + matrix[2, 2]
    decision = jnp.array([matrix[0, 0], matrix[1, 1], matrix[2, 2], matrix_trace],
                         dtype=matrix.dtype)
    choice = jnp.argmax(decision)
    i = choice
    j = (i + 1) % 3
    k = (j + 1) % 3
    quat_012 = jnp.empty(4, dtype=matrix.dtype)
    quat_012 = quat_012.at[i].set(1 - decision[3] + 2 * matrix[i, i])
    quat_012 = quat_012.at[j].set(matrix[j, i] + matrix[i, j])
    quat_012 = quat_012.at[k].set(matrix[k, i] + matrix[i, k])
    quat_012 = quat_012.at[3].set(matrix[k, j] - matrix[j, k])
    quat_3 = jnp.empty(4, dtype=matrix.dtype)
    quat_3 = quat_3.at[0].set(matrix[2, 1] - matrix[1, 2])
    quat_3 = quat_3.at[1].set(matrix[0, 2] - matrix[2, 0])
    quat_3 = quat_3.at[2].set(matrix[1, 0] - matrix[0, 1])
    quat_3 = quat_3.at[3].set(1 + decision[3])
    quat = jnp.where(choice != 3, quat_012, quat_3)
    return _normalize_quaternion(quat)


@functools.partial(jnp.vectorize, signature="(m)->(n)")
def _from_mrp(mrp: Array) -> Array:
    mrp_squared_plus_1 = jnp.dot(mrp, mrp) + 1
    return jnp.hstack([2 * mrp[:3], (2 - mrp_squared_plus_1)]) / mrp_squared_plus_1


@functools.partial(jnp.vectorize, signature="(n)->(n)")
def _inv(quat: Array) -> Array:
    return quat * jnp.array([-1, -1, -1, 1], dtype=quat.dtype)


@functools.partial(jnp.vectorize, signature="(n)->()")
def _magnitude(quat: Array) -> Array:
    return 2. * jnp.arctan2(_vector_norm(quat[:3]), jnp.abs(quat[3]))


@functools.partial(jnp.vectorize, signature="(),()->(n)")
def _make_elementary_quat(axis: Array, angle: Array) -> Array:
    quat = jnp.zeros(4, dtype=angle.dtype)
    quat = quat.at[3].set(jnp.cos(angle / 2.))
    return quat.at[axis].set(jnp.sin(angle / 2.))


@functools.partial(jnp.vectorize, signature="(n)->(n)")
def _normalize_quaternion(quat: Array) -> Array:
    return quat / _vector_norm(quat)


@functools.partial(jnp.vectorize, signature="(n)->()")
def _vector_norm(vector: Array) -> Array:
    return jnp.sqrt(jnp.dot(vector, vector))


@functools.partial(jnp.vectorize, signature="(n)->(n)")
def _make_canonical(quat: Array) -> Array:
    is_neg = quat < 0
    is_zero = quat == 0
    neg = (is_neg[3] | (is_zero[3] & is_neg[0]) | (is_zero[3] & is_zero[0] & is_neg[1])
           | (is_zero[3] & is_zero[0] & is_zero[1] & is_neg[2]))
    return jnp.where(neg, -quat, quat)
