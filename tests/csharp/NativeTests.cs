// NativeTests.cs: the P/Invoke runner (csharp/Runtime/Native.cs) against
// libnnn's own answers: `nnnkit run`'s outputs bit for bit, `nnnkit validate
// --json`'s problems, the C compiler's struct layouts, and the reference
// outputs of the real files; Npy (csharp/Runtime/Npy.cs) against the bytes
// libnnn writes and the fields and offsets its reader names.
//
// Paths are Tree's (NNN_BUILD, NNN_ROOT, NNN_SHARED: make test-csharp sets
// them). The native library is found as Nnn.dll's DllImport finds it (the
// build's Nnn.dll.config maps it to libnnn.so.1).
using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.Globalization;
using System.IO;
using System.Linq;
using System.Reflection;
using System.Runtime.InteropServices;
using System.Text;
using System.Text.RegularExpressions;
using NUnit.Framework;

namespace Nnn.Tests
{
    /// <summary>Where things are, and nnnkit run as a process.</summary>
    static class Env
    {
        internal static string Root => Tree.Source;
        internal static string Build => Tree.Build;
        internal static string Real => Path.Combine(Tree.Shared, "corpus", "real");
        internal static string Nnnkit => Tree.Nnnkit;

        /// <summary>Runs a program; returns its exit code, stdout and stderr.</summary>
        internal static int Run(string program, string[] args, out string stdout, out string stderr)
        {
            if (!File.Exists(program))
                Assert.Ignore(program + " is missing: build the project (make) or set NNN_BUILD to its build folder");
            var psi = new ProcessStartInfo(program, string.Join(" ", args.Select(Tree.Quote)))
            {
                UseShellExecute = false,
                RedirectStandardOutput = true,
                RedirectStandardError = true,
            };
            using (Process p = Process.Start(psi))
            {
                var err = p.StandardError.ReadToEndAsync();
                stdout = p.StandardOutput.ReadToEnd();
                stderr = err.Result;
                p.WaitForExit();
                return p.ExitCode;
            }
        }

        /// <summary>nnnkit run MODEL on X (written as .npy) with those options: its output file's bytes.</summary>
        internal static byte[] NnnkitRun(string dir, string model, long[] shape, float[] x, params string[] options)
        {
            string input = Path.Combine(dir, "x.npy"), output = Path.Combine(dir, "y.npy");
            File.WriteAllBytes(input, Npy.ToBytes(shape, x));
            File.Delete(output);
            var args = new List<string> { "run", model, "--input", input, "-o", output };
            args.AddRange(options);
            int rc = Run(Nnnkit, args.ToArray(), out string so, out string se);
            Assert.AreEqual(0, rc, "nnnkit " + string.Join(" ", args) + ": " + se);
            return File.ReadAllBytes(output);
        }

        /// <summary>The example model `make` builds (build/example.nnn), or the same made by
        /// build/mkexample into <paramref name="dir"/> when the build has not written it.</summary>
        internal static string Example(string dir, string net = null)
        {
            string built = Path.Combine(Build, "example.nnn");
            if (net == null && File.Exists(built))
                return built;
            string path = Path.Combine(dir, (net ?? "example") + ".nnn");
            var args = net == null ? new[] { path } : new[] { "--net", net, path };
            int rc = Run(Path.Combine(Build, "mkexample"), args, out string so, out string se);
            Assert.AreEqual(0, rc, "mkexample: " + se);
            return path;
        }

        /// <summary>n samples of the given sample shape, in [-1, 1), from a fixed LCG.</summary>
        internal static float[] Samples(long count, uint seed)
        {
            var x = new float[count];
            uint s = seed;
            for (long i = 0; i < count; i++)
            {
                s = s * 1664525u + 1013904223u;
                x[i] = (s >> 8) / (float)(1 << 23) - 1f;
            }
            return x;
        }

        internal static void SameBits(float[] want, float[] got, string what)
        {
            Assert.AreEqual(want.Length, got.Length, what + ": element count");
            for (int i = 0; i < want.Length; i++)
                if (BitConverter.ToInt32(BitConverter.GetBytes(want[i]), 0) != BitConverter.ToInt32(BitConverter.GetBytes(got[i]), 0))
                    Assert.Fail(what + ": element " + i + " is " + got[i].ToString("R") + ", nnnkit gives " +
                                want[i].ToString("R"));
        }

        /// <summary>nnnkit validate --json's first problem: code name, path, offset (-1: none), message.</summary>
        internal static Dictionary<string, object> FirstProblem(string model, params string[] options)
        {
            var args = new List<string> { "validate", "--json" };
            args.AddRange(options);
            args.Add(model);
            Run(Nnnkit, args.ToArray(), out string so, out string se);
            var problems = (List<object>)((Dictionary<string, object>)Json.Parse(so))["problems"];
            Assert.IsNotEmpty(problems, "nnnkit validate finds no problem in " + model + ": " + so);
            return (Dictionary<string, object>)problems[0];
        }

        internal static void SameProblem(Dictionary<string, object> want, NnnException e)
        {
            Assert.AreEqual((string)want["code"], e.Code.ToString(), "code; " + e.Problem);
            Assert.AreEqual((string)want["path"], e.Path, "path; " + e.Problem);
            Assert.AreEqual(want.ContainsKey("offset") ? (long)(double)want["offset"] : -1, e.Offset, "offset; " + e.Problem);
            Assert.AreEqual((string)want["message"], e.Problem.Message, "message");
        }

        /// <summary>nnnkit's "nnnkit: FILE: PATH @0xOFFSET: ..." line: its path and offset.</summary>
        internal static void Where(string stderr, out string path, out long offset)
        {
            Match m = Regex.Match(stderr, @": (\S+) @0x([0-9a-f]+): ");
            Assert.IsTrue(m.Success, "no 'PATH @0xOFFSET:' in nnnkit's message: " + stderr);
            path = m.Groups[1].Value;
            offset = long.Parse(m.Groups[2].Value, NumberStyles.HexNumber);
        }
    }

    /// <summary>Just enough JSON for expected.json and nnnkit's --json output.</summary>
    static class Json
    {
        internal static object Parse(string s)
        {
            int i = 0;
            object v = Value(s, ref i);
            Ws(s, ref i);
            if (i != s.Length)
                throw new FormatException("JSON: text after the value at " + i);
            return v;
        }

        static void Ws(string s, ref int i)
        {
            while (i < s.Length && char.IsWhiteSpace(s[i]))
                i++;
        }

        static object Value(string s, ref int i)
        {
            Ws(s, ref i);
            char c = s[i];
            if (c == '{')
            {
                var o = new Dictionary<string, object>();
                i++;
                Ws(s, ref i);
                if (s[i] == '}') { i++; return o; }
                for (;;)
                {
                    Ws(s, ref i);
                    string k = (string)Value(s, ref i);
                    Ws(s, ref i);
                    i++; // ':'
                    o[k] = Value(s, ref i);
                    Ws(s, ref i);
                    if (s[i++] == '}')
                        return o;
                }
            }
            if (c == '[')
            {
                var a = new List<object>();
                i++;
                Ws(s, ref i);
                if (s[i] == ']') { i++; return a; }
                for (;;)
                {
                    a.Add(Value(s, ref i));
                    Ws(s, ref i);
                    if (s[i++] == ']')
                        return a;
                }
            }
            if (c == '"')
            {
                var b = new StringBuilder();
                for (i++; s[i] != '"'; i++)
                {
                    if (s[i] != '\\') { b.Append(s[i]); continue; }
                    char e = s[++i];
                    if (e == 'u') { b.Append((char)Convert.ToInt32(s.Substring(i + 1, 4), 16)); i += 4; }
                    else b.Append(e == 'n' ? '\n' : e == 't' ? '\t' : e == 'r' ? '\r' : e == 'b' ? '\b' : e == 'f' ? '\f' : e);
                }
                i++;
                return b.ToString();
            }
            foreach (var w in new[] { "true", "false", "null" })
                if (string.CompareOrdinal(s, i, w, 0, w.Length) == 0)
                {
                    i += w.Length;
                    return w == "null" ? null : (object)(w == "true");
                }
            int start = i;
            while (i < s.Length && "+-0123456789.eE".IndexOf(s[i]) >= 0)
                i++;
            return double.Parse(s.Substring(start, i - start), CultureInfo.InvariantCulture);
        }

        /// <summary>A nested list of numbers, flattened in order (C order), as float32.</summary>
        internal static float[] Floats(object v)
        {
            var r = new List<float>();
            Flatten(v, r);
            return r.ToArray();
        }

        static void Flatten(object v, List<float> r)
        {
            if (v is List<object> a)
                foreach (object e in a)
                    Flatten(e, r);
            else
                r.Add((float)(double)v);
        }

        internal static long[] Longs(object v) => ((List<object>)v).Select(d => (long)(double)d).ToArray();
    }

    [TestFixture]
    public class NativeTests
    {
        string dir;

        [TestFixtureSetUp]
        public void MakeDir() => dir = Tree.TempDir();

        [TestFixtureTearDown]
        public void RemoveDir() => Directory.Delete(dir, true);

        static Dictionary<string, object> RealCases()
        {
            string expected = Path.Combine(Env.Real, "expected.json");
            if (!File.Exists(expected))
                Assert.Ignore("skipped: " + Env.Real + " is missing (the real files are outside the project: set NNN_SHARED)");
            return (Dictionary<string, object>)Json.Parse(File.ReadAllText(expected));
        }

        /// <summary>Runs a model both ways: nnnkit run's output file, and NativeModel.Run's
        /// outputs as Npy writes them: the same bytes (header and every float's bits).</summary>
        void SameAsNnnkit(string model, long[] shape, float[] x, int batch, int threads, ConvCompat compat, string what)
        {
            var opts = new List<string> { "--batch", batch.ToString(), "--threads", threads.ToString() };
            if (compat == ConvCompat.Original)
                opts.AddRange(new[] { "--conv-compat", "original" });
            byte[] want = Env.NnnkitRun(dir, model, shape, x, opts.ToArray());
            float[] wantY = Npy.Read(want, out long[] wantShape);
            using (NativeModel m = NativeModel.Open(model))
            {
                float[] y = m.Run(x, shape, out long[] outShape, batch, threads, compat);
                CollectionAssert.AreEqual(wantShape, outShape, what + ": output shape");
                Env.SameBits(wantY, y, what);
                CollectionAssert.AreEqual(want, Npy.ToBytes(outShape, y), what + ": the .npy bytes");
            }
        }

        [Test]
        public void RealFilesGiveNnnkitRunsOutputsBitForBit(
            [Values(1, 3, 256)] int batch, [Values(1, 2)] int threads)
        {
            foreach (var kv in RealCases())
            {
                var c = (Dictionary<string, object>)kv.Value;
                SameAsNnnkit(Path.Combine(Env.Real, kv.Key), Json.Longs(c["input_shape"]), Json.Floats(c["input"]),
                             batch, threads, ConvCompat.Spec, kv.Key + " batch " + batch + " threads " + threads);
            }
        }

        [Test]
        public void RealFilesGiveTheReferenceOutputs()
        {
            // expected.json's outputs come from an independent implementation: README.md
            // says to compare with a relative tolerance of about 1e-5.
            foreach (var kv in RealCases())
            {
                var c = (Dictionary<string, object>)kv.Value;
                float[] want = Json.Floats(c["output"]);
                using (NativeModel m = NativeModel.Open(Path.Combine(Env.Real, kv.Key)))
                {
                    float[] y = m.Run(Json.Floats(c["input"]), Json.Longs(c["input_shape"]), out long[] shape);
                    CollectionAssert.AreEqual(Json.Longs(c["output_shape"]), shape, kv.Key);
                    for (int i = 0; i < want.Length; i++)
                        Assert.AreEqual(want[i], y[i], 1e-5 * Math.Max(1, Math.Abs(want[i])), kv.Key + " output " + i);
                }
            }
        }

        [Test]
        public void ExampleGivesNnnkitRunsOutputsBitForBit(
            [Values(1, 5, 16, 256)] int batch, [Values(1, 2)] int threads)
        {
            var shape = new long[] { 37, 28, 28, 1 };
            SameAsNnnkit(Env.Example(dir), shape, Env.Samples(37 * 28 * 28, 7), batch, threads, ConvCompat.Spec,
                         "example batch " + batch + " threads " + threads);
        }

        [Test]
        public void ConvCompatReachesTheKernels()
        {
            // Unequal kernel sizes (5x3): the original framework's convolution differs from
            // the spec's there, so both settings are checked against nnnkit's, and differ.
            string model = Env.Example(dir, "conv5x3");
            var shape = new long[] { 2, 32, 32, 16 };
            float[] x = Env.Samples(2 * 32 * 32 * 16, 11);
            SameAsNnnkit(model, shape, x, 256, 2, ConvCompat.Spec, "conv5x3 spec");
            SameAsNnnkit(model, shape, x, 1, 1, ConvCompat.Original, "conv5x3 original");
            using (NativeModel m = NativeModel.Open(model))
                CollectionAssert.AreNotEqual(m.Run(x, shape, out long[] a), m.Run(x, shape, out a, convCompat: ConvCompat.Original));
        }

        [Test]
        public void FromBytesAndPlansGiveWhatOpenGives()
        {
            string model = Env.Example(dir);
            var shape = new long[] { 3, 28, 28, 1 };
            float[] x = Env.Samples(3 * 28 * 28, 5);
            float[] want = Npy.Read(Env.NnnkitRun(dir, model, shape, x), out long[] wantShape);
            using (NativeModel m = NativeModel.FromBytes(File.ReadAllBytes(model)))
            using (NativePlan p = m.Plan(shape, threads: 2))
            {
                CollectionAssert.AreEqual(shape, p.InputShape);
                CollectionAssert.AreEqual(wantShape, p.OutputShape);
                m.Dispose(); // a plan keeps its model and context
                Env.SameBits(want, p.Run(x), "FromBytes, one plan");
                var y = new float[want.Length];
                p.Run(x, y);
                Env.SameBits(want, y, "FromBytes, one plan, into an array");
                Assert.Throws<ObjectDisposedException>(() => m.Plan(shape));
                Assert.Throws<ArgumentException>(() => p.Run(new float[x.Length - 1]));
            }
        }

        static readonly Func<byte[], byte[]>[] Damages =
        {
            b => b.Take(b.Length / 2).ToArray(),                     // cut short
            b => new[] { (byte)'X' }.Concat(b.Skip(1)).ToArray(),    // not the magic
            b => b.Concat(new byte[] { 1, 2, 3 }).ToArray(),         // bytes after the last layer
        };

        [Test]
        public void BadFilesGiveLibnnnsProblem([Values(0, 1, 2)] int damage)
        {
            string bad = Path.Combine(dir, "bad" + damage + ".nnn");
            File.WriteAllBytes(bad, Damages[damage](File.ReadAllBytes(Env.Example(dir))));
            var want = Env.FirstProblem(bad);
            Env.SameProblem(want, Assert.Throws<NnnException>(() => NativeModel.Open(bad)));
            Env.SameProblem(want, Assert.Throws<NnnException>(() => NativeModel.FromBytes(File.ReadAllBytes(bad))));
        }

        [Test]
        public void AShapeThatDoesNotFitGivesLibnnnsProblem()
        {
            string model = Env.Example(dir);
            var want = Env.FirstProblem(model, "--input-shape", "2,9,9,1");
            using (NativeModel m = NativeModel.Open(model))
                Env.SameProblem(want, Assert.Throws<NnnException>(() => m.Plan(new long[] { 2, 9, 9, 1 })));
        }

        [Test]
        public void AMissingFileIsAnIoError()
        {
            var e = Assert.Throws<NnnException>(() => NativeModel.Open(Path.Combine(dir, "none.nnn")));
            Assert.AreEqual(Status.E_IO, e.Code, e.Problem.ToString());
        }

        [Test]
        public void AModelWithoutLayersGivesWhatNnnkitRunGives()
        {
            // No layer: nnnkit run's output is its input; the plan's output shape is the input's.
            string model = Path.Combine(dir, "no-layers.nnn");
            new Model().Write(model);
            var shape = new long[] { 3, 4 };
            float[] x = Env.Samples(3 * 4, 13);
            float[] want = Npy.Read(Env.NnnkitRun(dir, model, shape, x), out long[] wantShape);
            using (NativeModel m = NativeModel.Open(model))
            {
                using (NativePlan p = m.Plan(shape))
                {
                    CollectionAssert.AreEqual(shape, p.InputShape, "plan input shape");
                    CollectionAssert.AreEqual(wantShape, p.OutputShape, "plan output shape");
                    Env.SameBits(want, p.Run(x), "no layers, one plan");
                }
                float[] y = m.Run(x, shape, out long[] outShape, batch: 2);
                CollectionAssert.AreEqual(wantShape, outShape, "Run's output shape");
                Env.SameBits(want, y, "no layers, batches of 2");
            }
        }

        [Test]
        public void DisposingFreesWhatItMade()
        {
            // 300 open/plan/run/dispose rounds: the process' resident memory must not grow by
            // more than a few MiB (each round maps a 3 MB model and plans its buffers).
            string model = Env.Example(dir);
            var shape = new long[] { 4, 28, 28, 1 };
            float[] x = Env.Samples(4 * 28 * 28, 3);
            Func<long> rss = () => Process.GetCurrentProcess().WorkingSet64;
            long start = 0;
            for (int round = 0; round < 330; round++)
            {
                if (round == 30)
                {
                    GC.Collect();
                    GC.WaitForPendingFinalizers();
                    start = rss();
                }
                using (NativeModel m = NativeModel.Open(model))
                using (NativePlan p = m.Plan(shape))
                    p.Run(x);
            }
            GC.Collect();
            GC.WaitForPendingFinalizers();
            long grown = rss() - start;
            Assert.Less(grown, 16L << 20, "resident memory grew by " + (grown >> 10) + " KiB over 300 rounds");
        }

        /// <summary>The C# mirrors of libnnn's structs against the C compiler's layout
        /// (tests/csharp/native_layout.c): every member, its offset, the size, and the
        /// constants they are sized by.</summary>
        [Test]
        public void MirroredStructsHaveTheCLayout()
        {
            string cc = new[] { "/usr/bin/cc", "/usr/local/bin/cc" }.FirstOrDefault(File.Exists);
            string gen = Path.Combine(Env.Build, "gen");
            if (cc == null || !Directory.Exists(gen))
                Assert.Ignore("no C compiler or no " + gen + " (the generated headers): the layout is not checked");
            string exe = Path.Combine(dir, "native_layout");
            int rc = Env.Run(cc, new[] { "-std=c11", "-I" + Path.Combine(Env.Root, "runtime", "include"), "-I" + gen, "-o", exe,
                                         Path.Combine(Env.Root, "tests", "csharp", "native_layout.c") }, out string so, out string se);
            Assert.AreEqual(0, rc, "cc: " + se);
            Env.Run(exe, new string[0], out so, out se);

            var mirrors = new Dictionary<string, string>
            {
                { "nnn_diag_t", "Diag" }, { "nnn_diags_t", "Diags" }, { "nnn_shape_t", "Shape" },
                { "nnn_run_opts_t", "RunOpts" }, { "nnn_decode_opts_t", "DecodeOpts" },
                { "nnn_discover_opts_t", "DiscoverOpts" },
            };
            var constants = new Dictionary<string, long>
            {
                { "NNN_PATH_MAX", Internal<int>("PathMax") }, { "NNN_MSG_MAX", Internal<int>("MsgMax") },
                { "NNN_MAX_RANK", Native.MaxRank }, { "NNN_DECODE_COPY", Internal<uint>("DecodeCopy") },
                { "NNN_COMPAT_CONV_ORIGINAL", (long)ConvCompat.Original }, { "NNN_RUN_BATCH", Native.RunBatch },
            };
            var members = new Dictionary<string, HashSet<string>>();
            int lines = 0;
            foreach (string line in so.Split(new[] { '\n' }, StringSplitOptions.RemoveEmptyEntries))
            {
                string[] f = line.Split(' ');
                long n = long.Parse(f[2]);
                lines++;
                if (f[0] == "const")
                {
                    Assert.AreEqual(n, constants[f[1]], f[1]);
                    continue;
                }
                Type t = typeof(Native).GetNestedType(mirrors[f[0]], BindingFlags.NonPublic);
                if (f[1] == "sizeof")
                {
                    Assert.AreEqual(n, Marshal.SizeOf(t), f[0] + " size");
                    continue;
                }
                Assert.AreEqual(n, (long)Marshal.OffsetOf(t, f[1]), f[0] + "." + f[1] + " offset");
                if (!members.ContainsKey(f[0]))
                    members[f[0]] = new HashSet<string>();
                members[f[0]].Add(f[1]);
            }
            Assert.Greater(lines, 0, "native_layout printed nothing");
            foreach (var kv in mirrors)
            {
                var fields = typeof(Native).GetNestedType(kv.Value, BindingFlags.NonPublic)
                                           .GetFields(BindingFlags.Instance | BindingFlags.Public | BindingFlags.NonPublic)
                                           .Select(f => f.Name);
                CollectionAssert.AreEquivalent(members[kv.Key], fields, kv.Key + ": the C# mirror's members");
            }
        }

        static T Internal<T>(string name) =>
            (T)typeof(Native).GetField(name, BindingFlags.Static | BindingFlags.NonPublic).GetValue(null);
    }

    [TestFixture]
    public class NpyTests
    {
        string dir;

        [TestFixtureSetUp]
        public void MakeDir() => dir = Tree.TempDir();

        [TestFixtureTearDown]
        public void RemoveDir() => Directory.Delete(dir, true);

        [Test]
        public void WritesWhatLibnnnWrites()
        {
            // mkexample writes its sample inputs with libnnn's nnn_npy_write_file (np.save's bytes).
            string model = Path.Combine(dir, "m.nnn"), inputs = Path.Combine(dir, "in.npy");
            int rc = Env.Run(Path.Combine(Env.Build, "mkexample"), new[] { model, inputs }, out string so, out string se);
            Assert.AreEqual(0, rc, se);
            byte[] file = File.ReadAllBytes(inputs);
            float[] x = Npy.Read(file, out long[] shape);
            Assert.AreEqual(4, shape.Length);
            CollectionAssert.AreEqual(file, Npy.ToBytes(shape, x));
            string copy = Path.Combine(dir, "copy.npy");
            Npy.Write(copy, shape, x);
            Npy.Write(copy, shape, x); // replaces
            CollectionAssert.AreEqual(file, File.ReadAllBytes(copy));
            Assert.AreEqual(1, Directory.GetFiles(dir, "copy.npy*").Length, "a temporary file was left");
        }

        [Test]
        public void ReadsVersion2AndAnyShape([Values(0, 1, 2, 3)] int rank)
        {
            long[] shape = new long[] { 3, 1, 2 }.Take(rank).ToArray();
            if (rank == 3)
                shape[1] = 0;
            long count = shape.Aggregate(1L, (a, d) => a * d);
            float[] x = Env.Samples(count, 1);
            byte[] v1 = Npy.ToBytes(shape, x);
            int hlen = v1[8] | v1[9] << 8;
            // Version 2.0: a 4-byte header length, the same dict.
            byte[] v2 = v1.Take(6).Concat(new byte[] { 2, 0, (byte)hlen, (byte)(hlen >> 8), 0, 0 }).Concat(v1.Skip(10)).ToArray();
            foreach (byte[] b in new[] { v1, v2 })
            {
                float[] y = Npy.Read(b, out long[] got);
                CollectionAssert.AreEqual(shape, got);
                Env.SameBits(x, y, "rank " + rank);
            }
        }

        static byte[] WithHeader(string dict, int version, byte[] data)
        {
            int pre = version == 1 ? 10 : 12;
            string h = dict + new string(' ', 64 - (pre + dict.Length + 1) % 64) + "\n";
            var head = new List<byte>(new byte[] { 0x93, (byte)'N', (byte)'U', (byte)'M', (byte)'P', (byte)'Y', (byte)version, 0 });
            head.AddRange(version == 1 ? new[] { (byte)h.Length, (byte)(h.Length >> 8) }
                                       : new[] { (byte)h.Length, (byte)(h.Length >> 8), (byte)0, (byte)0 });
            return head.Concat(Encoding.ASCII.GetBytes(h)).Concat(data).ToArray();
        }

        const string F4 = "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }";

        public static readonly object[] Refused =
        {
            // dict, version, data bytes, whether libnnn refuses it too (it converts '<f8' and reads 3.0)
            new object[] { "{'descr': '>f4', 'fortran_order': False, 'shape': (2,), }", 1, 8, true },
            new object[] { "{'descr': '<f8', 'fortran_order': False, 'shape': (2,), }", 1, 16, false },
            new object[] { "{'descr': '<f4', 'fortran_order': True, 'shape': (2,), }", 1, 8, true },
            new object[] { "{'descr': '<f4', 'fortran_order': False, 'shape': (2), }", 1, 8, true },
            new object[] { "{'descr': '<f4', 'shape': (2,), }", 1, 8, true },
            new object[] { "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'x': 1}", 2, 8, true },
            new object[] { F4, 3, 8, false },
            new object[] { F4, 1, 7, true },
            new object[] { F4, 1, 9, true },
        };

        /// <summary>Npy refuses with E_NPY; where libnnn's reader refuses the file too, Npy
        /// names the same field and byte offset (nnnkit run's message gives them).</summary>
        [Test, TestCaseSource(nameof(Refused))]
        public void RefusesWhatItDoesNotRead(string dict, int version, int dataBytes, bool libnnnRefuses)
        {
            byte[] b = WithHeader(dict, version == 3 ? 2 : version, new byte[dataBytes]);
            if (version == 3)
                b[6] = 3;
            var e = Assert.Throws<NnnException>(() => Npy.Read(b, out long[] shape));
            Assert.AreEqual(Status.E_NPY, e.Code, e.Problem.ToString());
            if (!libnnnRefuses)
                return;
            string path = Path.Combine(dir, "bad.npy"), model = Path.Combine(dir, "identity.nnn");
            File.WriteAllBytes(path, b);
            if (!File.Exists(model))
                Env.Run(Path.Combine(Env.Build, "mkexample"), new[] { "--net", "identity", model }, out string so0, out string se0);
            int rc = Env.Run(Env.Nnnkit, new[] { "run", model, "--input", path }, out string so, out string se);
            Assert.AreNotEqual(0, rc, "nnnkit reads it: " + so);
            Env.Where(se, out string where, out long offset);
            Assert.AreEqual(where, e.Path, e.Problem + " / nnnkit: " + se);
            Assert.AreEqual(offset, e.Offset, e.Problem + " / nnnkit: " + se);
        }
    }
}
