// ToolTests.cs: nnn-cs.exe as a user runs it: its usage errors and exit
// statuses (0 valid, 1 invalid, 2 usage or I/O, as nnnkit's), a problem
// printed as `FILE: path @0xOFFSET: message` at libnnn's path and offset,
// and its round trip (the corpus's bytes are the truth).
using System.IO;
using System.Json;
using NUnit.Framework;

namespace Nnn.Tests
{
    [TestFixture]
    public sealed class ToolTests
    {
        static void Usage(string args, string says)
        {
            Ran r = Env.Tool_(args);
            Assert.AreEqual(2, r.Exit, "nnn-cs " + args + ": " + r);
            Assert.AreEqual("", r.Out, "nnn-cs " + args + " wrote to stdout: " + r);
            StringAssert.StartsWith("nnn-cs: ", r.Err, r.ToString());
            StringAssert.Contains(says, r.Err, r.ToString());
            StringAssert.Contains("--help", r.Err, "a usage error points at --help: " + r);
        }

        [Test]
        public void UsageErrorsExitTwoAndSayWhat()
        {
            string valid = Env.CaseFile(Env.Case("valid"));
            Usage("", "no command");
            Usage("frobnicate " + Env.Quote(valid), "unknown command 'frobnicate'");
            Usage("decode", "no FILE");
            Usage("validate", "no FILE");
            Usage("roundtrip", "no FILE");
            Usage("decode " + Env.Quote(valid) + " " + Env.Quote(valid), "too many arguments");
            Usage("roundtrip a.nnn b.nnn c.nnn", "too many arguments");
            Usage("decode --frob " + Env.Quote(valid), "unknown option '--frob'");
            Usage("decode -", "'-'");
            Usage("validate --input-shape", "--input-shape needs");
            foreach (string bad in new[] { "0", "1,,2", "1,", ",1", "1,x", "-1", "1.5", "2147483648", "1, 2" })
                Usage("validate --input-shape " + Env.Quote(bad) + " " + Env.Quote(valid), "--input-shape needs");
            Usage("testee extra", "testee: unexpected argument");
        }

        [Test]
        public void HelpExitsZeroOnStdout()
        {
            foreach (string args in new[] { "--help", "-h", "validate --help" })
            {
                Ran r = Env.Tool_(args);
                Assert.AreEqual(0, r.Exit, r.ToString());
                StringAssert.StartsWith("usage: mono nnn-cs.exe", r.Out, r.ToString());
                Assert.AreEqual("", r.Err, r.ToString());
                foreach (string cmd in new[] { "decode", "validate", "roundtrip", "testee", "Exit status" })
                    StringAssert.Contains(cmd, r.Out, "the help names " + cmd);
            }
        }

        [Test]
        public void MissingFileIsAnIoErrorExitTwo()
        {
            string dir = Env.TempDir();
            string missing = Path.Combine(dir, "missing.nnn");
            foreach (string cmd in new[] { "decode", "validate", "roundtrip" })
            {
                Ran r = Env.Tool_(cmd + " " + Env.Quote(missing));
                Assert.AreEqual(2, r.Exit, cmd + ": " + r);
                StringAssert.StartsWith(missing + ": ", r.Err, r.ToString());
            }
            Directory.Delete(dir, true);
        }

        [Test]
        public void ValidCaseDecodesValidatesAndRoundTrips()
        {
            JsonObject c = Env.Case("valid");
            string file = Env.CaseFile(c);
            var dims = new System.Collections.Generic.List<string>();
            foreach (JsonValue d in (JsonArray)c["input_shape"])
                dims.Add(((long)d).ToString());
            string shape = string.Join(",", dims);
            foreach (string args in new[] { "decode", "validate", "validate --input-shape " + shape, "roundtrip" })
            {
                Ran r = Env.Tool_(args + " " + Env.Quote(file));
                Assert.AreEqual(0, r.Exit, args + ": " + r);
                Assert.AreEqual("", r.Err, args + ": " + r);
                StringAssert.StartsWith(file + ": ", r.Out, args + ": " + r);
            }
            string dir = Env.TempDir();
            string output = Path.Combine(dir, "out.nnn");
            Ran w = Env.Tool_("roundtrip " + Env.Quote(file) + " " + Env.Quote(output));
            Assert.AreEqual(0, w.Exit, w.ToString());
            CollectionAssert.AreEqual(File.ReadAllBytes(file), File.ReadAllBytes(output), "roundtrip OUT wrote other bytes");
            Assert.AreEqual(new[] { output }, Directory.GetFiles(dir), "the atomic write left a file behind");
            Directory.Delete(dir, true);
        }

        /// <summary>A structural case: exit 1, and the manifest's path and offset (libnnn's) printed.</summary>
        [Test]
        public void InvalidCaseExitsOneWithLibnnnsPathAndOffset()
        {
            JsonObject c = Env.Case("structural");
            string file = Env.CaseFile(c);
            string at = (string)c["path"] + " @0x" + ((long)c["offset"]).ToString("x") + ": ";
            foreach (string cmd in new[] { "decode", "validate", "roundtrip" })
            {
                Ran r = Env.Tool_(cmd + " " + Env.Quote(file));
                Assert.AreEqual(1, r.Exit, cmd + ": " + r);
                Assert.AreEqual("", r.Out, cmd + ": " + r);
                StringAssert.StartsWith(file + ": " + at, r.Err, cmd + ": " + r);
            }
        }
    }
}
