package onnxpb

import (
	"math"
)

// Tensor element types (TensorProto.DataType).
const (
	TypeUndefined = 0
	TypeFloat     = 1
	TypeUint8     = 2
	TypeInt8      = 3
	TypeUint16    = 4
	TypeInt16     = 5
	TypeInt32     = 6
	TypeInt64     = 7
	TypeString    = 8
	TypeBool      = 9
	TypeFloat16   = 10
	TypeDouble    = 11
	TypeUint32    = 12
	TypeUint64    = 13
	TypeComplex64 = 14
	TypeComplex   = 15
	TypeBFloat16  = 16
)

// AttributeType is AttributeProto.AttributeType.
type AttributeType int32

// The attribute types.
const (
	AttrUndefined    AttributeType = 0
	AttrFloat        AttributeType = 1
	AttrInt          AttributeType = 2
	AttrString       AttributeType = 3
	AttrTensor       AttributeType = 4
	AttrGraph        AttributeType = 5
	AttrFloats       AttributeType = 6
	AttrInts         AttributeType = 7
	AttrStrings      AttributeType = 8
	AttrTensors      AttributeType = 9
	AttrGraphs       AttributeType = 10
	AttrSparseTensor AttributeType = 11
	AttrTypeProto    AttributeType = 13
)

// Model is ModelProto. Training info and model-local functions are not
// represented: the decoder records their presence in Unsupported.
type Model struct {
	IRVersion       int64               // 1
	ProducerName    string              // 2
	ProducerVersion string              // 3
	Domain          string              // 4
	ModelVersion    int64               // 5
	DocString       string              // 6
	Graph           *Graph              // 7
	OpsetImport     []OperatorSetID     // 8
	MetadataProps   []StringStringEntry // 14
	// Unsupported lists the field numbers of ModelProto fields that were
	// present in decoded bytes but are not represented (20 training_info,
	// 25 functions), so a reader can refuse the model instead of silently
	// dropping them. The encoder ignores it.
	Unsupported []int
}

// OperatorSetID is OperatorSetIdProto.
type OperatorSetID struct {
	Domain  string // 1
	Version int64  // 2
}

// StringStringEntry is StringStringEntryProto.
type StringStringEntry struct {
	Key   string // 1
	Value string // 2
}

// Graph is GraphProto (sparse initializers and quantization annotations
// are not represented; the decoder records them in Unsupported).
type Graph struct {
	Node        []*Node      // 1
	Name        string       // 2
	Initializer []*Tensor    // 5
	DocString   string       // 10
	Input       []*ValueInfo // 11
	Output      []*ValueInfo // 12
	ValueInfo   []*ValueInfo // 13
	Unsupported []int
}

// Node is NodeProto.
type Node struct {
	Input     []string     // 1
	Output    []string     // 2
	Name      string       // 3
	OpType    string       // 4
	Attribute []*Attribute // 5
	DocString string       // 6
	Domain    string       // 7
}

// Attribute is AttributeProto. The scalar value of the declared Type (F,
// I) is always encoded, even when zero. Sparse tensors and type protos are
// not represented; the decoder records them in Unsupported.
type Attribute struct {
	Name        string        // 1
	F           float32       // 2
	I           int64         // 3
	S           []byte        // 4
	T           *Tensor       // 5
	G           *Graph        // 6
	Floats      []float32     // 7
	Ints        []int64       // 8
	Strings     [][]byte      // 9
	Tensors     []*Tensor     // 10
	Graphs      []*Graph      // 11
	DocString   string        // 13
	Type        AttributeType // 20
	RefAttrName string        // 21
	Unsupported []int
}

// Tensor is TensorProto. Segments are not represented; the decoder
// records them in Unsupported.
type Tensor struct {
	Dims         []int64             // 1
	DataType     int32               // 2
	FloatData    []float32           // 4 (packed)
	Int32Data    []int32             // 5 (packed)
	StringData   [][]byte            // 6
	Int64Data    []int64             // 7 (packed)
	Name         string              // 8
	RawData      []byte              // 9
	DoubleData   []float64           // 10 (packed)
	Uint64Data   []uint64            // 11 (packed)
	DocString    string              // 12
	ExternalData []StringStringEntry // 13
	DataLocation int32               // 14
	Unsupported  []int
}

// ValueInfo is ValueInfoProto.
type ValueInfo struct {
	Name      string // 1
	Type      *Type  // 2
	DocString string // 3
}

// Type is TypeProto. Only tensor types are represented; the decoder
// records any other kind (sequence, map, optional, sparse tensor) in
// Unsupported.
type Type struct {
	Tensor      *TensorType // 1
	Denotation  string      // 6
	Unsupported []int
}

// TensorType is TypeProto.Tensor. A nil Shape means the rank is unknown.
type TensorType struct {
	ElemType int32        // 1
	Shape    *TensorShape // 2
}

// TensorShape is TensorShapeProto.
type TensorShape struct {
	Dim []Dimension // 1
}

// Dimension is TensorShapeProto.Dimension: a size (HasValue), a symbol
// (Param != ""), or neither (unknown).
type Dimension struct {
	Value      int64  // 1
	HasValue   bool   // whether dim_value is set (a size of 0 is a size)
	Param      string // 2
	Denotation string // 3
}

// Marshal encodes the model.
func (m *Model) Marshal() []byte {
	var e encoder
	m.encode(&e)
	return e.b
}

func (m *Model) encode(e *encoder) {
	e.int64Field(1, m.IRVersion)
	e.stringOpt(2, m.ProducerName)
	e.stringOpt(3, m.ProducerVersion)
	e.stringOpt(4, m.Domain)
	e.int64Opt(5, m.ModelVersion)
	e.stringOpt(6, m.DocString)
	if m.Graph != nil {
		e.message(7, m.Graph.encode)
	}
	for _, o := range m.OpsetImport {
		e.message(8, o.encode)
	}
	for _, p := range m.MetadataProps {
		e.message(14, p.encode)
	}
}

func (o OperatorSetID) encode(e *encoder) {
	e.stringField(1, o.Domain)
	e.int64Field(2, o.Version)
}

func (p StringStringEntry) encode(e *encoder) {
	e.stringField(1, p.Key)
	e.stringField(2, p.Value)
}

func (g *Graph) encode(e *encoder) {
	for _, n := range g.Node {
		e.message(1, n.encode)
	}
	e.stringOpt(2, g.Name)
	for _, t := range g.Initializer {
		e.message(5, t.encode)
	}
	e.stringOpt(10, g.DocString)
	for _, v := range g.Input {
		e.message(11, v.encode)
	}
	for _, v := range g.Output {
		e.message(12, v.encode)
	}
	for _, v := range g.ValueInfo {
		e.message(13, v.encode)
	}
}

func (n *Node) encode(e *encoder) {
	for _, s := range n.Input {
		e.stringField(1, s)
	}
	for _, s := range n.Output {
		e.stringField(2, s)
	}
	e.stringOpt(3, n.Name)
	e.stringOpt(4, n.OpType)
	for _, a := range n.Attribute {
		e.message(5, a.encode)
	}
	e.stringOpt(6, n.DocString)
	e.stringOpt(7, n.Domain)
}

func (a *Attribute) encode(e *encoder) {
	e.stringField(1, a.Name)
	if a.Type == AttrFloat || a.F != 0 {
		e.float32Field(2, a.F)
	}
	if a.Type == AttrInt || a.I != 0 {
		e.int64Field(3, a.I)
	}
	if a.Type == AttrString || a.S != nil {
		e.bytesField(4, a.S)
	}
	if a.T != nil {
		e.message(5, a.T.encode)
	}
	if a.G != nil {
		e.message(6, a.G.encode)
	}
	for _, f := range a.Floats {
		e.float32Field(7, f)
	}
	for _, i := range a.Ints {
		e.int64Field(8, i)
	}
	for _, s := range a.Strings {
		e.bytesField(9, s)
	}
	for _, t := range a.Tensors {
		e.message(10, t.encode)
	}
	for _, g := range a.Graphs {
		e.message(11, g.encode)
	}
	e.stringOpt(13, a.DocString)
	e.int64Field(20, int64(a.Type))
	e.stringOpt(21, a.RefAttrName)
}

func (t *Tensor) encode(e *encoder) {
	for _, d := range t.Dims {
		e.int64Field(1, d)
	}
	e.int64Field(2, int64(t.DataType))
	if len(t.FloatData) > 0 {
		var p encoder
		for _, f := range t.FloatData {
			p.b = append(p.b, byte(math.Float32bits(f)), byte(math.Float32bits(f)>>8), byte(math.Float32bits(f)>>16), byte(math.Float32bits(f)>>24))
		}
		e.bytesField(4, p.b)
	}
	if len(t.Int32Data) > 0 {
		var p encoder
		for _, v := range t.Int32Data {
			p.varint(uint64(int64(v)))
		}
		e.bytesField(5, p.b)
	}
	for _, s := range t.StringData {
		e.bytesField(6, s)
	}
	if len(t.Int64Data) > 0 {
		var p encoder
		for _, v := range t.Int64Data {
			p.varint(uint64(v))
		}
		e.bytesField(7, p.b)
	}
	e.stringOpt(8, t.Name)
	if t.RawData != nil {
		e.bytesField(9, t.RawData)
	}
	if len(t.DoubleData) > 0 {
		var p encoder
		for _, v := range t.DoubleData {
			bits := math.Float64bits(v)
			for k := range 8 {
				p.b = append(p.b, byte(bits>>(8*k)))
			}
		}
		e.bytesField(10, p.b)
	}
	if len(t.Uint64Data) > 0 {
		var p encoder
		for _, v := range t.Uint64Data {
			p.varint(v)
		}
		e.bytesField(11, p.b)
	}
	e.stringOpt(12, t.DocString)
	for _, x := range t.ExternalData {
		e.message(13, x.encode)
	}
	e.int64Opt(14, int64(t.DataLocation))
}

func (v *ValueInfo) encode(e *encoder) {
	e.stringField(1, v.Name)
	if v.Type != nil {
		e.message(2, v.Type.encode)
	}
	e.stringOpt(3, v.DocString)
}

func (t *Type) encode(e *encoder) {
	if t.Tensor != nil {
		e.message(1, t.Tensor.encode)
	}
	e.stringOpt(6, t.Denotation)
}

func (t *TensorType) encode(e *encoder) {
	e.int64Field(1, int64(t.ElemType))
	if t.Shape != nil {
		e.message(2, t.Shape.encode)
	}
}

func (s *TensorShape) encode(e *encoder) {
	for _, d := range s.Dim {
		e.message(1, d.encode)
	}
}

func (d Dimension) encode(e *encoder) {
	switch {
	case d.HasValue:
		e.int64Field(1, d.Value)
	case d.Param != "":
		e.stringField(2, d.Param)
	}
	e.stringOpt(3, d.Denotation)
}
