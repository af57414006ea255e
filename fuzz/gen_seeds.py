#!/usr/bin/env python3
"""fuzz/gen_seeds.py: writes the hand-made seed corpora under fuzz/seeds/.

    python3 fuzz/gen_seeds.py [OUT]      (default: fuzz/seeds)

Every .nnn seed is encoded here by hand from the format (docs/format.md), not
with libnnn, so the seeds do not inherit a bug of the encoder. Valid models go
to every model harness; the mutation classes (truncated, bad bool, bad UTF-8,
trailing bytes, negative count, unknown IDs, ...) go to fuzz_decode and
fuzz_dump, where the decoder's error paths are. fuzz_npy gets one file per
dtype and version and the reader's rejections; fuzz_json the JSON form's
value forms, a build spec, and one of each mistake.
"""
import math
import os
import struct
import sys

MAGIC = 776883790  # b'NNN.'
DENSE, CONV = 0, 1
LINEAR, SIGMOID, TANH, RELU, LEAKY, SOFTMAX = range(6)
VALID, SAME = 0, 1


def i32(v):
    return struct.pack('<i', v)


def u64(v):
    return struct.pack('<Q', v)


def f32(v):
    return struct.pack('<f', v)


def string(b):
    return i32(len(b)) + b


def i32s(v):
    return i32(len(v)) + b''.join(i32(x) for x in v)


def tensor(dims, values=None, grad=1):
    n = 1
    for d in dims:
        n *= d
    if values is None:
        values = [0.25 * ((i * 7) % 11) - 1.0 for i in range(n)]
    return i32s(dims) + bytes([grad]) + i32(len(values)) + b''.join(f32(x) for x in values)


def activation(act, tau=0.1):
    return bytes([act]) + (f32(tau) if act == LEAKY else b'')


def dense(inputs, neurons, act=LINEAR, flatten=0, tau=0.1, dropout=0.0):
    return (bytes([DENSE]) + activation(act, tau) + f32(dropout) + tensor([neurons]) + i32(neurons) +
            tensor([inputs, neurons]) + bytes([flatten]))


def conv(filters, ks, channels, ptype=VALID, act=RELU, dropout=0.0):
    pads = []
    for k in ks:
        if ptype == SAME:
            before = (k - 1) // 2
            pads += [before, k - 1 - before]
        else:
            pads += [0, 0]
    return (bytes([CONV]) + activation(act) + f32(dropout) + tensor([filters]) + i32(filters) +
            tensor([filters] + ks + [channels]) + i32(ptype) + i32s(pads))


def params(layers):
    return sum(n for _, n in layers)


def model(layers, desc=b'seed', param_count=None):
    """layers: (bytes, parameter count) pairs."""
    if param_count is None:
        param_count = params(layers)
    return (i32(MAGIC) + string(desc) + u64(param_count) + i32(len(layers)) +
            b''.join(b for b, _ in layers))


def D(inputs, neurons, **kw):
    return dense(inputs, neurons, **kw), neurons + inputs * neurons


def C(filters, ks, channels, **kw):
    n = filters
    for k in ks:
        n *= k
    return conv(filters, ks, channels, **kw), filters + n * channels


def valid_models():
    return {
        'empty': model([], b''),
        'tiny_dense': model([D(3, 2, act=LEAKY), D(2, 1)], b'tiny'),
        'dense_acts': model([D(2, 3, act=SIGMOID), D(3, 3, act=TANH), D(3, 2, act=RELU),
                             D(2, 4, act=SOFTMAX)], b'every activation'),
        'dense_dropout': model([D(4, 4, act=RELU, dropout=0.5), D(4, 2, act=LEAKY, tau=0.05)]),
        'conv1d_valid': model([C(2, [3], 1), D(2 * 3, 2, flatten=1, act=SOFTMAX)], b'conv1d'),
        'conv2d_same': model([C(2, [3, 2], 2, ptype=SAME, act=TANH), D(2, 3)], b'conv2d same'),
        'conv3d': model([C(1, [2, 2, 2], 1), C(2, [1, 1, 1], 1, act=LINEAR)], b'conv3d'),
        'utf8_desc': model([D(1, 1)], 'naïve модель ✓ 🧠'.encode()),
    }


def set_at(b, at, raw):
    return b[:at] + raw + b[at + len(raw):]


def invalid_models(v):
    tiny = v['tiny_dense']
    # offsets in tiny: description "tiny" 4..11, param_count 12, layer_count 20,
    # layers[0] @24: id 24, act 25, tau 26..29, dropout 30..33, bias dims count 34,
    # dims[0] 38, requires_grad 42, data count 43
    out = {
        'trunc_header': tiny[:10],
        'trunc_layer': tiny[:60],
        'trunc_last_byte': tiny[:-1],
        'bad_bool': set_at(tiny, 42, b'\x02'),
        'bad_flatten': tiny[:-1] + b'\x07',
        'bad_utf8': model([D(1, 1)], b'\xc0\x80 overlong \xed\xa0\x80'),
        'trailing': tiny + b'\x00\x01\x02',
        'negative_count': set_at(tiny, 34, i32(-1)),
        'negative_layers': set_at(tiny, 20, i32(-5)),
        'length_bomb_layers': set_at(tiny, 20, i32(0x7fffffff)),
        'length_bomb_data': set_at(tiny, 43, i32(0x7fffffff)),
        'length_bomb_desc': set_at(tiny, 4, i32(0x7ffffff0)),
        'bad_magic': b'NNM.' + tiny[4:],
        'unknown_layer': set_at(tiny, 24, b'\x07'),
        'unknown_act': set_at(tiny, 25, b'\x09'),
        'unknown_layer_later': model([D(2, 2), (b'\x09' + dense(2, 2)[1:], 6), D(2, 1)]),
        'dims_mismatch': set_at(tiny, 38, i32(3)),
        'dim_negative': model([(bytes([DENSE, LINEAR]) + f32(0) + i32s([-2]) + b'\x01' + i32(0) + i32(2) +
                                tensor([2, 2]) + b'\x00', 6)]),
        'dims_overflow': model([(bytes([DENSE, LINEAR]) + f32(0) + i32s([0x7fffffff] * 3) + b'\x01' + i32(0) +
                                 i32(2) + tensor([2, 2]) + b'\x00', 6)]),
        'param_count': model([D(3, 2)], param_count=999),
        'nan_tau': model([D(2, 2, act=LEAKY, tau=math.nan)]),
        'dropout_one': model([D(2, 2, dropout=1.0)]),
        'chain_mismatch': model([D(3, 2), D(5, 1)]),
        'zero_neurons': model([(bytes([DENSE, LINEAR]) + f32(0) + tensor([0]) + i32(0) + tensor([3, 0]) +
                                b'\x00', 0)]),
        'conv_bad_padding_type': v['conv1d_valid'].replace(i32(VALID) + i32s([0, 0]), i32(5) + i32s([0, 0]), 1),
        'conv_bad_pads': v['conv2d_same'].replace(i32(SAME) + i32s([1, 1, 0, 1]), i32(SAME) + i32s([0, 2, 1, 0]), 1),
        'conv_rank1_kernels': model([(bytes([CONV, RELU]) + f32(0) + tensor([2]) + i32(2) + tensor([2]) +
                                      i32(VALID) + i32s([]), 4)]),
        'conv_zero_channels': model([(bytes([CONV, RELU]) + f32(0) + tensor([2]) + i32(2) + tensor([2, 3, 0]) +
                                      i32(VALID) + i32s([0, 0]), 2)]),
        'conv_huge_same': model([(bytes([CONV, RELU]) + f32(0) + tensor([1]) + i32(1) +
                                  i32s([1, 0x7fffffff, 0]) + b'\x01' + i32(0) + i32(SAME) +
                                  i32s([0x3fffffff, 0x3fffffff]), 1)]),
    }
    assert out['conv_bad_padding_type'] != v['conv1d_valid']
    assert out['conv_bad_pads'] != v['conv2d_same']
    return out


def npy(descr, shape, data, version=1, fortran='False', extra=b'', header=None):
    if header is None:
        dims = ', '.join(str(d) for d in shape) + (',' if len(shape) == 1 else '')
        header = "{'descr': '%s', 'fortran_order': %s, 'shape': (%s), }" % (descr, fortran, dims)
    h = header.encode() if isinstance(header, str) else header
    pre = 10 if version == 1 else 12
    pad = 64 - (pre + len(h) + 1) % 64
    h = h + b' ' * pad + b'\n'
    lenb = struct.pack('<H', len(h)) if version == 1 else struct.pack('<I', len(h))
    return b'\x93NUMPY' + bytes([version, 0]) + lenb + h + data + extra


def npys():
    f4 = b''.join(f32(x) for x in [0.0, -1.5, 3.25, math.inf, -math.inf, math.nan])
    return {
        'f4_2x3': npy('<f4', [2, 3], f4),
        'f4_scalar': npy('<f4', [], f32(42.0)),
        'f4_empty': npy('<f4', [0, 5], b''),
        'f4_rank1': npy('<f4', [3], f4[:12]),
        'f4_v2': npy('<f4', [1, 2], f4[:8], version=2),
        'f4_v3': npy('<f4', [2], f4[:8], version=3),
        'f8': npy('<f8', [2], struct.pack('<dd', 1e-3, -2.5e30)),
        'f8_range': npy('<f8', [1], struct.pack('<d', 1e300)),
        'i4': npy('<i4', [3], struct.pack('<iii', -7, 0, 1 << 30)),
        'i8': npy('<i8', [2], struct.pack('<qq', -(1 << 62), 12345)),
        'u1': npy('|u1', [4], bytes([0, 1, 128, 255])),
        'b1': npy('|b1', [3], bytes([0, 1, 1])),
        'b1_bad': npy('|b1', [2], bytes([0, 2])),
        'py2_long': npy('<f4', [], b'', header="{'descr': '<f4', 'fortran_order': False, 'shape': (2L, 1L), }") +
        f4[:8],
        'key_order': npy('<f4', [], f4[:4], header="{ 'shape' : (1,) ,'fortran_order':False,\t\"descr\":'<f4'}"),
        'fortran': npy('<f4', [2], f4[:8], fortran='True'),
        'big_endian': npy('>f4', [1], f4[:4]),
        'trailing': npy('<f4', [1], f4[:4], extra=b'\x00'),
        'truncated': npy('<f4', [2, 3], f4)[:-5],
        'huge_dims_zero': npy('<f4', [0, 9223372036854775807], b''),
        'dims_overflow': npy('<f4', [4294967296, 4294967296], b''),
        'rank33': npy('<f4', [1] * 33, b''),
    }


def jsons():
    """The JSON form (docs/json.md), strict and as build specs: every value form once."""
    tensor = '{"dims": [%s], "requires_grad": %s, "data": [%s]}'
    dense = ('{"id": "dense", "activation": %s, "dropout": %s, "bias": %s, "neurons": %d, '
             '"weights": %s, "flatten": false}')
    tiny = ('{"description": "tiny", "param_count": 11, "layers": [%s, %s]}' % (
        dense % ('{"id": "leaky_relu", "tau": 0.1}', '0.0', tensor % ('2', 'true', '-1.0, -0.5'), 2,
                 tensor % ('3, 2', 'true', '-1.0, -0.5, 0.0, 0.5, 1.0, 1.5')),
        dense % ('{"id": "linear"}', '0.0', tensor % ('1', 'true', '-1.0'), 1,
                 tensor % ('2, 1', 'false', '-1.0, -0.5'))))
    floats = ('"nan", "nan:0x7fc00001", "nan:0xff800001", "inf", "-inf", -0.0, 1e-45, 3.4028235e+38, '
              '0.1, 16777218.0')
    special = ('{"description": "caf\\u00e9 \\u0000 \\"q\\"", "param_count": "18446744073709551615", '
               '"magic": 776883790, "layer_count": 1, "layers": [%s]}' % (
                   dense % ('{"id": 4, "tau": "nan:0x7fa00000"}', '-0.0', tensor % ('10', 'true', floats), 10,
                            tensor % ('1, 10', 'true', floats))))
    conv = ('{"description": "", "param_count": 0, "layers": [{"id": "conv", "activation": {"id": "relu"}, '
            '"dropout": 0.0, "bias": %s, "filters": 1, "kernels": %s, "padding_type": "same", '
            '"padding_dims": [1, 1]}, {"id": 1, "activation": {"id": "softmax"}, "dropout": 0.5, "bias": %s, '
            '"filters": 1, "kernels": %s, "padding_type": 7, "padding_dims": []}]}' % (
                tensor % ('1', 'true', '0.5'), tensor % ('1, 3, 1', 'true', '1, 2, 3'),
                tensor % ('0', 'true', ''), tensor % ('', 'true', '2.0')))
    spec = ('{"layers": [{"activation": "relu", "weights": {"dims": [2, 3], "data": [1, 2, 3, 4, 5, 6]}, '
            '"bias": {"data": [0, 0, 0]}}, {"id": "dense", "activation": {"id": "leaky_relu", "tau": 0.5}, '
            '"weights": {"data": [1, 2, 3]}, "bias": "b.npy"}]}')
    return {
        'tiny': tiny,
        'special': special,
        'conv': conv,
        'spec': spec,
        'npy_ref': tiny.replace('[-1.0, -0.5]}', '{"npy": "b.npy", "shape": [2], "dtype": "float32"}}', 1),
        'missing': tiny.replace(', "flatten": false', '', 1),
        'unknown': tiny.replace('"flatten": false', '"flaten": false', 1),
        'wrong_type': tiny.replace('[3, 2]', '[3, "2"]', 1),
        'range': tiny.replace('"neurons": 2', '"neurons": 2147483648', 1),
        'dims': tiny.replace('[3, 2]', '[3, 3]', 1),
        'syntax': tiny[:-1],
        'duplicate': tiny.replace('"tiny",', '"tiny", "description": "x",', 1),
        'empty': '{}',
    }


def write(folder, name, data):
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, name), 'wb') as f:
        f.write(data)


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), 'seeds')
    v = valid_models()
    bad = invalid_models(v)
    for name, data in v.items():
        for h in ('fuzz_decode', 'fuzz_dump', 'fuzz_run'):
            write(os.path.join(out, h), name + '.nnn', data)
    for name, data in bad.items():
        for h in ('fuzz_decode', 'fuzz_dump'):
            write(os.path.join(out, h), name + '.nnn', data)
    for name in ('chain_mismatch', 'conv_zero_channels', 'conv_huge_same', 'param_count'):
        write(os.path.join(out, 'fuzz_run'), name + '.nnn', bad[name])
    for name, data in npys().items():
        write(os.path.join(out, 'fuzz_npy'), name + '.npy', data)
    for name, text in jsons().items():
        write(os.path.join(out, 'fuzz_json'), name + '.json', text.encode())


if __name__ == '__main__':
    main()
